"""How PostgreSQL makes forgotten text unrecoverable: VACUUM removes dead rows and
their index entries after a forget; :meth:`PostgresEraser.purge` rebuilds what VACUUM
leaves behind (GIN keys, planner statistics) and, with ``full``, rewrites every table."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from ...errors import StoreError
from ..core.backend import Eraser
from ..register import tables as backend_tables
from .engine import PostgresEngine
from .statistics import STATISTICS_LOCK

log = logging.getLogger("archivist.storage.postgres")

DERIVED = ("fact_terms", "term_stats", "fact_vectors")
NOT_REBUILT = "keyword index not rebuilt (run archivist purge)"
NOT_VACUUMED = "dead rows not vacuumed yet (autovacuum will; archivist purge --full does now)"


def user_data_tables() -> tuple[str, ...]:
    """Every PostgreSQL table holding a user's rows (the register's)."""
    return tuple(dict.fromkeys(t.name for t in backend_tables("postgres") if t.holds_users()))


class PostgresEraser(Eraser):
    def __init__(self, db: PostgresEngine, *, vacuum_on_forget: bool = True, purge_on_forget: bool = True) -> None:
        self.db = db
        self.vacuum_on_forget = vacuum_on_forget
        self.purge_on_forget = purge_on_forget

    def after_forget(self, tables, *, whole_user):
        """Remove the dead row versions (and their index entries) of forgotten rows now,
        rather than when autovacuum gets to them, then purge. Runs outside any
        transaction, after the forget committed; a note when the purge did not complete
        (the forget stands; ``archivist purge`` finishes the job)."""
        if self.vacuum_on_forget:
            try:
                with self.db.connect() as conn:
                    conn.execute(f"VACUUM (INDEX_CLEANUP ON) {', '.join(dict.fromkeys((*tables, *DERIVED)))}")
            except (StoreError, self.db.psycopg.Error) as exc:  # the forget committed: it stands
                log.warning("forgotten, but the dead rows were not vacuumed now: %s", exc)
                return NOT_VACUUMED
        if self.purge_on_forget:
            try:
                self.purge()
            except StoreError as exc:
                log.warning("forgotten, but the keyword index was not rebuilt: %s", exc)
                return NOT_REBUILT
        return None

    def purge(self, *, full: bool = False, wait_seconds: float = 60.0) -> list[str]:
        """Rewrite what VACUUM leaves behind; returns the relations rewritten.

        VACUUM removes dead rows and their index entries, but a GIN index never drops a
        key once made, and freed b-tree and heap space keeps its old bytes until reused:
        the words of forgotten text would stay readable in the keyword index files. This
        rebuilds the keyword tables' indexes (``REINDEX … CONCURRENTLY``: reads and writes
        go on). It also re-samples the planner statistics (``ANALYZE``): those autovacuum
        took before a forget, whenever it ran, keep forgotten values in ``pg_statistic``
        (most common values, histogram bounds, tsvector lexemes), and ANALYZE leaves an
        emptied table's old ones in place, so those are cleared. ``full`` also rewrites
        every table holding user data and all their indexes (``VACUUM FULL``: an exclusive
        lock per table, for maintenance windows), then ``pg_statistic`` (superuser or
        MAINTAIN on it), so no page of the database keeps a forgotten byte. A rewrite
        copies the row versions a running transaction may still see, so each first waits
        up to ``wait_seconds`` for the transactions begun before it (StoreError if one
        is still running)."""
        tables = list(dict.fromkeys((*user_data_tables(), "embedding_cache")))
        try:
            with self.db.connect() as conn:
                # no bulk write's ANALYZE runs beside the purge (it would deadlock with the
                # REINDEX) or began before the forget and ends after the purge's own ANALYZE;
                # the lock ends with this connection
                conn.execute("SELECT pg_advisory_lock(%s)", (STATISTICS_LOCK,))
                if full:
                    self._wait_for_older_transactions(conn, wait_seconds)
                    conn.execute(f"VACUUM FULL {', '.join(tables)}")
                    done = list(tables)
                else:
                    done = self._drop_invalid_indexes(conn, ("fact_terms", "term_stats"))
                    for table in ("fact_terms", "term_stats"):
                        conn.execute(f"REINDEX TABLE CONCURRENTLY {table}")
                    done += ["fact_terms indexes", "term_stats indexes"]
                self._resample_statistics(conn, tables)
                if full:
                    if self._may_rewrite_statistics(conn):
                        self._wait_for_older_transactions(conn, wait_seconds)
                        conn.execute("VACUUM FULL pg_catalog.pg_statistic")
                        done.append("pg_statistic")
                    else:
                        log.warning("%s: pg_statistic not rewritten (needs superuser or MAINTAIN on it): superseded "
                                    "planner statistics may keep bytes of forgotten values", self.db.path)
        except self.db.psycopg.Error as exc:
            raise StoreError(f"{self.db.path}: purge failed ({str(exc).strip()})") from exc
        return done

    @staticmethod
    def _drop_invalid_indexes(conn, tables: Sequence[str]) -> list[str]:
        """Drop what an interrupted ``REINDEX … CONCURRENTLY`` left (a server restart, a
        cancel, a deadlock): invalid ``*_ccnew`` indexes, of the tables and their TOAST
        tables. A later REINDEX skips them while writes still go into them, so they would
        keep the words of text forgotten after."""
        names = [r[0] for r in conn.execute(
            "SELECT i.indexrelid::regclass::text FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid "
            "WHERE NOT i.indisvalid AND (t.oid = ANY(%s::regclass[]) OR t.oid IN "
            "(SELECT reltoastrelid FROM pg_class WHERE oid = ANY(%s::regclass[])))", (list(tables), list(tables)))]
        for name in names:
            conn.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {name}")
        return [f"{name} (invalid, dropped)" for name in names]

    def _resample_statistics(self, conn, tables: Sequence[str]) -> None:
        """Planner statistics from the rows there are now; none for a table left empty
        (ANALYZE of an empty table keeps its old ones)."""
        conn.execute(f"ANALYZE {', '.join(tables)}")
        empty = [r[0] for r in conn.execute(
            "SELECT DISTINCT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname "
            "WHERE c.oid = ANY(%s::regclass[]) AND c.reltuples = 0", (list(tables),))]
        if not empty:
            return
        if conn.info.server_version >= 180000:
            conn.execute("SELECT pg_catalog.pg_clear_attribute_stats(n.nspname, c.relname, a.attname, false) "
                         "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                         "JOIN pg_attribute a ON a.attrelid = c.oid "
                         "WHERE c.oid = ANY(%s::regclass[]) AND a.attnum > 0 AND NOT a.attisdropped", (empty,))
        elif conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
            conn.execute("DELETE FROM pg_catalog.pg_statistic WHERE starelid = ANY(%s::regclass[])", (empty,))
        else:
            log.warning("%s: the old planner statistics of the emptied tables %s stay (clearing them needs "
                        "PostgreSQL 18 or a superuser)", self.db.path, ", ".join(empty))

    @staticmethod
    def _may_rewrite_statistics(conn) -> bool:
        if conn.info.server_version >= 170000:
            return bool(conn.execute("SELECT has_table_privilege('pg_catalog.pg_statistic', 'MAINTAIN')").fetchone()[0])
        return bool(conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0])

    def _wait_for_older_transactions(self, conn, wait_seconds: float) -> None:
        """Wait until no transaction begun before now still runs: one holding an xid in
        any database of the server (the rewrite's own snapshot would keep the row
        versions it may see), a snapshot in this database, a prepared transaction, a
        replication slot or a standby's feedback. Autovacuum's plain VACUUMs hold back
        nothing. StoreError naming what still runs after ``wait_seconds``."""
        # an xid of our own: every transaction given one before it has a smaller one
        target = int(conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0])
        params = {"t": str(target), "x": str(target % 2**32)}
        deadline = time.monotonic() + wait_seconds
        while True:
            older = conn.execute("""
                SELECT 'pid ' || pid || ' (' || coalesce(datname, backend_type) || ', ' || coalesce(state, '') || ': '
                       || left(coalesce(query, ''), 60) || ')'
                  FROM pg_stat_activity
                 WHERE pid <> pg_backend_pid()
                   AND (age(backend_xid) > age(%(x)s::xid)
                        OR (age(backend_xmin) > age(%(x)s::xid) AND (datname = current_database() OR datname IS NULL)
                            AND NOT (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM%%'
                                     AND query NOT LIKE '%%ANALYZE%%')))
                UNION ALL
                SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts WHERE age(transaction) > age(%(x)s::xid)
                UNION ALL
                SELECT 'replication slot ' || slot_name FROM pg_replication_slots
                 WHERE age(xmin) > age(%(x)s::xid) OR age(catalog_xmin) > age(%(x)s::xid)
                UNION ALL
                SELECT 'the oldest running transaction (xid ' || pg_snapshot_xmin(pg_current_snapshot()) || ')'
                 WHERE pg_snapshot_xmin(pg_current_snapshot()) < %(t)s::xid8""", params).fetchall()
            if not older:
                return
            if time.monotonic() >= deadline:
                raise StoreError(f"{self.db.path}: purge waited {wait_seconds:g}s for transactions older than it, "
                                 f"still running: {'; '.join(dict.fromkeys(r[0] for r in older))}")
            time.sleep(0.1)
