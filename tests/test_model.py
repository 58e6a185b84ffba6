import re

import pytest

from archivist import Identity, InvalidIdentity
from archivist.model import new_id

UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


def test_ids_are_uuid7_unique_and_time_ordered():
    ids = [new_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert all(UUID7.match(i) for i in ids)
    # the 48-bit millisecond prefix never goes backwards
    prefixes = [i[:13] for i in ids]
    assert prefixes == sorted(prefixes)


@pytest.mark.parametrize("bad", ["", "   ", "x" * 300, "a\x00b", None, 5])
def test_identity_rejects_bad_parts(bad):
    with pytest.raises(InvalidIdentity):
        Identity("t", bad, "a")


def test_identity_accepts_unicode():
    assert Identity("租户", "用户", "agent").user == "用户"
