"""Forgetting (seed 003: deletion reaches every copy), written once for every backend.
Which tables hold a user's words, and what forgetting does to each, is the register's
(:mod:`archivist.storage.register`); the backend's eraser then makes the deleted bytes
unrecoverable from its files."""

from __future__ import annotations

from ...model import content_hash
from ..base import cache_keys
from ..register import backend_user_tables, user_tables
from ..rows import (
    FACT_COLUMNS,
    FORGOTTEN_SUMMARY,
    N_FACT_COLUMNS,
    Counts,
    fact_from_row,
    redaction_needles,
)
from .backend import Access
from .erasure import ErasureJobs

_FORGET_NOTE = "forgotten at the user''s request"
# tables a forget of one fact may change (the eraser cleans up after them)
FACT_TABLES = ("facts", "audit", "context_traces", "session_summaries", "evidence", "embedding_cache", "tombstones",
               "ingest_jobs")


class Forgetting(ErasureJobs):
    def forget_fact(self, identity, fact_ids, *, at):
        counts = Counts()
        count = counts.add
        scope, params = self._scope(identity)
        with self.transaction():
            for fact_id in fact_ids:
                seen, seen_params = self._seen(identity)
                row = self._write(identity, f"SELECT {FACT_COLUMNS}, seq FROM facts WHERE id = ? AND {seen}"
                                            + self.sql.for_update, (fact_id, *seen_params)).fetchone()
                if row is None:
                    continue
                fact, seq = fact_from_row(row), row[N_FACT_COLUMNS]
                chash = content_hash(fact.content)
                count(self.keyword_index.table, self.keyword_index.remove(identity, seq))
                count("fact_vectors", self.vector_store.remove(identity, seq, erase=True))
                count("embedding_cache", self._forget_cached(identity, cache_keys(identity.tenant, fact.embed_text)))
                count("facts (links cleared)", self._write(
                    identity, f"UPDATE facts SET supersedes = NULL WHERE supersedes = ? AND {scope}",
                    (fact_id, *params)).rowcount)
                count("facts", self._write(identity, "DELETE FROM facts WHERE seq = ?", (seq,)).rowcount)
                count("audit (text redacted)", self._write(
                    identity, "UPDATE audit SET content = NULL, reason = replace(reason, ?, '[forgotten]') "
                              f"WHERE {scope} AND (fact_id = ? OR content_hash = ?)",
                    (fact.content, *params, fact_id, chash)).rowcount)
                quotes = [fact.content] + ([fact.provenance.evidence_text] if fact.provenance.evidence_text else [])
                count("context_traces (redacted)", self._redact("context_traces", "payload", identity, quotes))
                count("session_summaries (redacted)", self._redact("session_summaries", "payload", identity, quotes))
                # evidence is the user's, whichever agent kept it
                count("evidence (redacted)", self._redact("evidence", "content", identity, quotes, whole_user=True))
                count("ingest_jobs (redacted)", self._redact("ingest_jobs", "result", identity, quotes))
                cites = self.sql.json_array_has("cited_fact_ids")
                count("session_summaries (marked stale)", self._write(
                    identity, f"UPDATE session_summaries SET stale_reason = ? WHERE {scope} "
                              f"AND stale_reason IS NULL AND {cites}",
                    (f"cites forgotten fact {fact_id}", *params, fact_id)).rowcount)
                count("session_summaries (text forgotten)", self._write(
                    identity, f"UPDATE session_summaries SET payload = ? WHERE {scope} AND payload <> ? AND {cites}",
                    (FORGOTTEN_SUMMARY, *params, FORGOTTEN_SUMMARY, fact_id)).rowcount)
                count("tombstones", self._add_tombstone(identity, chash, at))
                self._write(identity, "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, "
                                      f"content_hash) VALUES (?, ?, ?, ?, 'forget', 'forgotten', '{_FORGET_NOTE}', ?, ?)",
                            (*params, self._ts(at), fact_id, chash))
            if counts:  # the files are erased off the request path (core.erasure), after this commits
                counts.erasure_jobs.append(self._queue_erasure(identity.tenant, FACT_TABLES, whole_user=False))
        return counts

    def _forget_cached(self, who, keys) -> int:
        cond, values = self.sql.in_list("content_hash", sorted(set(keys)))
        return self._write(who, f"DELETE FROM embedding_cache WHERE {cond}", values).rowcount

    def _redact(self, table: str, column: str, identity, quotes, *, whole_user: bool = False) -> int:
        """Replace the quotes (as plain text and as JSON string content) inside the
        scope's rows of ``table`` (the user's, for ``whole_user``); returns the rows changed."""
        scope, params = self._owner(identity.tenant, identity.user) if whole_user else self._scope(identity)
        changed = 0
        for needle in redaction_needles(quotes):
            changed += self._write(identity, f"UPDATE {table} SET {column} = replace({column}, ?, '[forgotten]') "
                                             f"WHERE {scope} AND {self.sql.contains(column)}",
                                   (needle, *params, needle)).rowcount
        return changed

    def forget_user(self, tenant, user):
        """Every row of the user in every table the register lists, the derived indexes'
        entries and the embedding cache's vectors of their words; then the eraser."""
        who = Access(tenant, user)
        owner, params = self._owner(tenant, user)
        counts = Counts()
        with self.transaction():
            rows = self._write(who, f"SELECT {FACT_COLUMNS} FROM facts WHERE {owner}", params).fetchall()
            keys = {k for r in rows for k in cache_keys(tenant, fact_from_row(r).embed_text)}
            counts[self.keyword_index.table] = self.keyword_index.remove_user(tenant, user)
            counts["fact_vectors"] = self.vector_store.remove_user(tenant, user)
            counts["embedding_cache"] = sum(self._forget_cached(who, chunk)
                                            for chunk in _chunks(sorted(keys), 500))
            for table in user_tables() + backend_user_tables(self.sql.name):
                counts[table] = self._write(who, f"DELETE FROM {table} WHERE {owner}", params).rowcount
            counts.erasure_jobs.append(self._queue_erasure(tenant, user_tables() + ("embedding_cache",),
                                                            whole_user=True))
        return counts


def _chunks(items, size):
    return [items[i: i + size] for i in range(0, len(items), size)]
