"""The store conformance suite: one spec module per capability, run against every
backend by a parametrised ``backend`` fixture.

A backend passes by providing that fixture; for a third-party store::

    # test_my_store_conformance.py
    import pytest
    from archivist.testing.conformance import *  # noqa: F401,F403 - collects the specs
    from archivist.testing.conformance import Backend

    @pytest.fixture
    def backend(tmp_path):
        return Backend("mystore", lambda: MyStore(tmp_path / "db"))  # a fresh database per test

``Backend.open`` must return a new handle onto the same database each call (the
concurrency specs open several at once).
"""

from .backends import Backend, postgres_backend, sqlite_backend
from .spec_concurrency import *  # noqa: F401,F403
from .spec_contract import *  # noqa: F401,F403
from .spec_contract import __all__ as _contract
from .spec_concurrency import __all__ as _concurrency
from .spec_evidence import *  # noqa: F401,F403
from .spec_evidence import __all__ as _evidence
from .spec_expiry import *  # noqa: F401,F403
from .spec_expiry import __all__ as _expiry
from .spec_facts import *  # noqa: F401,F403
from .spec_facts import __all__ as _facts
from .spec_forgetting import *  # noqa: F401,F403
from .spec_forgetting import __all__ as _forgetting
from .spec_isolation import *  # noqa: F401,F403
from .spec_isolation import __all__ as _isolation
from .spec_keyword import *  # noqa: F401,F403
from .spec_keyword import __all__ as _keyword
from .spec_traces import *  # noqa: F401,F403
from .spec_traces import __all__ as _traces
from .spec_transactions import *  # noqa: F401,F403
from .spec_transactions import __all__ as _transactions
from .spec_vector import *  # noqa: F401,F403
from .spec_vector import __all__ as _vector

SPECS = [*_facts, *_isolation, *_keyword, *_vector, *_expiry, *_evidence, *_forgetting, *_traces, *_transactions,
         *_concurrency, *_contract]
__all__ = ["Backend", "postgres_backend", "sqlite_backend", "SPECS", *SPECS]
