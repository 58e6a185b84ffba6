"""Facts, their versions, the profile and the audit trail: written once for every backend."""

from __future__ import annotations

from ...errors import FactNotFound
from ...index.signatures import Signatures
from ...model import INDEXED, AuditEntry, Category, Profile, Status
from ..base import Progress, cache_keys
from ..rows import (
    FACT_COLUMNS,
    N_FACT_COLUMNS,
    PROFILE_COLUMNS,
    as_time,
    fact_from_row,
    fact_params,
    profile_section_from_row,
    profile_section_params,
)
from .backend import Access
from .scoped import Scoped

_INSERT_FACT = (f"INSERT INTO facts ({FACT_COLUMNS}, sig_text, sig_meaning, sig_core) "
                f"VALUES ({', '.join('?' * (N_FACT_COLUMNS + 3))})")
_NO_SIGNATURES = (None, None, None)
_KEYS_AT_ONCE = 900  # signature keys in one statement: SQLite's oldest builds take 999 parameters
_CREATED = [c.strip() for c in FACT_COLUMNS.split(",")].index("created_at")
# history rows closed their validity when retired: a live-at filter keeps them
_LIVE_AT = "AND (status NOT IN ('committed', 'candidate', 'episode') OR valid_until IS NULL OR valid_until > ?)"


class FactRows(Scoped):
    # -- facts ------------------------------------------------------------
    def insert_fact(self, fact):
        self._ids(fact.key, fact.provenance.thread_id, fact.provenance.message_id)
        with self.transaction():
            # the gate never compares with an episode: it has no signatures to index
            signatures = _NO_SIGNATURES if fact.status is Status.EPISODE else Signatures.of(fact.content)
            seq = self.db.insert(Access.of(fact.identity), _INSERT_FACT,
                                 self._storable((*fact_params(fact, self._ts), *signatures)))
            if fact.status in INDEXED:
                self.keyword_index.add(fact.identity, [(seq, fact)])

    def update_fact(self, fact):
        i = fact.identity
        with self.transaction():
            seen, params = self._seen(i)
            row = self._write(i, f"SELECT seq, {FACT_COLUMNS} FROM facts WHERE id = ? AND {seen}",
                              (fact.id, *params)).fetchone()
            if row is None:
                raise FactNotFound(fact.id)
            seq, before = row[0], fact_from_row(row[1:])
            if before.embed_text != fact.embed_text:  # a new context: the old text's cached vector goes
                self._forget_cached(i, cache_keys(i.tenant, before.embed_text))
            ts = self._ts
            self._write(
                i,
                "UPDATE facts SET status = ?, confidence = ?, updated_at = ?, last_confirmed_at = ?, valid_until = ?, "
                "version = ?, supersedes = ?, valid_from = ?, recorded_at = ?, retired_at = ?, context = ? WHERE seq = ?",
                (fact.status.value, fact.confidence, ts(fact.updated_at), ts(fact.last_confirmed_at),
                 ts(fact.valid_until), fact.version, fact.supersedes, ts(fact.valid_from),
                 ts(fact.recorded_at), ts(fact.retired_at), fact.context, seq),
            )
            self.keyword_index.remove(i, seq)
            if fact.status in INDEXED:
                self.keyword_index.add(i, [(seq, fact)])
            else:
                self.vector_store.remove(i, seq, erase=False)

    def get_fact(self, identity, fact_id):
        seen, params = self._seen(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ? AND {seen}", (fact_id, *params))
        return fact_from_row(rows[0]) if rows else None

    def list_facts(self, identity, *, statuses=(Status.COMMITTED,), key=None, live_at=None, limit=None, category=None,
                   expired_at=None, message_ids=None, thread_id=None):
        seen, seen_params = self._seen(identity)
        sql = [f"SELECT {FACT_COLUMNS} FROM facts WHERE {seen}"]
        params: list = list(seen_params)

        def where(condition: str, *values) -> None:
            sql.append(f"AND {condition}")
            params.extend(values)

        if statuses:
            cond, values = self.sql.in_list("status", [Status(s).value for s in statuses])
            where(cond, *values)
        if key is not None:
            where("key = ?", key)
        if thread_id is not None:
            where("thread_id = ?", thread_id)
        if message_ids is not None:
            cond, values = self.sql.in_list("message_id", list(message_ids))
            where(cond, *values)
        if category is not None:
            where("category = ?", Category(category).value)
        if expired_at is not None:
            where("valid_until IS NOT NULL AND valid_until <= ?", self._ts(expired_at))
        if live_at is not None:
            sql.append(_LIVE_AT)
            params.append(self._ts(live_at))
        sql.append("ORDER BY created_at DESC, seq DESC")
        if limit is not None:
            sql.append("LIMIT ?")
            params.append(self._limit(limit))
        return [fact_from_row(r) for r in self._read(identity, " ".join(sql), params)]

    def find_by_hash(self, identity, content_hash):
        seen, params = self._seen(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE {seen} AND content_hash = ? "
                                    "AND status IN ('committed', 'candidate')", (*params, content_hash))
        return [fact_from_row(r) for r in rows]

    def signature_matches(self, identity, *, text=(), meaning=(), core=(), live_at,
                          statuses=(Status.COMMITTED, Status.CANDIDATE)):
        keys = [(column, k) for column, values in (("sig_text", text), ("sig_meaning", meaning), ("sig_core", core))
                for k in sorted({v for v in values if v is not None})]
        found: dict[str, tuple] = {}  # a batch's keys go in statements of KEYS_AT_ONCE (a driver's limit)
        for start in range(0, len(keys), _KEYS_AT_ONCE):
            for row in self._by_signatures(identity, keys[start:start + _KEYS_AT_ONCE], live_at, statuses):
                found[row[4]] = row
        rows = sorted(found.values(), key=lambda r: (r[4 + _CREATED], r[0]), reverse=True)  # newest first
        return [(r[0], Signatures(*r[1:4]), fact_from_row(r[4:])) for r in rows]

    def _by_signatures(self, identity, keys, live_at, statuses) -> list[tuple]:
        """(seq, its three signatures, *fact columns) of the live facts holding one of ``keys``
        ((column, key) pairs)."""
        scope, scope_params = self._scope(identity)
        seen, seen_params = self._seen(identity, "facts.")
        status, status_params = self.sql.in_list("status", [Status(s).value for s in statuses])
        shared, params = [], []
        for column in ("sig_text", "sig_meaning", "sig_core"):
            values = [k for c, k in keys if c == column]
            if values:  # one index look-up per kind of signature (an OR would scan the scope)
                cond, values = self.sql.in_list(column, values)
                shared.append(f"SELECT seq FROM facts WHERE {scope} AND {column} IS NOT NULL AND {cond}")
                params += [*scope_params, *values]
        if not shared:
            return []
        # the matches first, then their rows: a planner must not walk the scope's facts instead
        return self._read(identity, f"SELECT facts.seq, sig_text, sig_meaning, sig_core, {FACT_COLUMNS} FROM ({' UNION '.join(shared)}) AS hit "
                                    f"CROSS JOIN facts WHERE facts.seq = hit.seq AND {seen} AND {status} {_LIVE_AT}",
                          (*params, *seen_params, *status_params, self._ts(live_at)))

    def keyword_search(self, identity, terms, *, limit, live_at, statuses=(Status.COMMITTED,)):
        terms = list(self._storable(list(terms)))
        return self.keyword_index.search(identity, terms, limit=self._limit(limit), live_at=live_at, statuses=statuses)

    # -- versions and time --------------------------------------------------
    def successor(self, identity, fact_id):
        seen, params = self._seen(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE supersedes = ? AND {seen} "
                                    "ORDER BY seq LIMIT 1", (fact_id, *params))
        return fact_from_row(rows[0]) if rows else None

    def facts_as_of(self, identity, at):
        t = self._ts(at)
        seen, params = self._seen(identity)
        rows = self._read(
            identity,
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {seen} "
            "AND recorded_at IS NOT NULL AND recorded_at <= ? AND (retired_at IS NULL OR retired_at > ?) "
            "AND (retired_at IS NOT NULL OR valid_until IS NULL OR valid_until > ?) ORDER BY created_at DESC, seq DESC",
            (*params, t, t, t),
        )
        return [fact_from_row(r) for r in rows]

    def key_history(self, identity, key):
        seen, params = self._seen(identity)
        rows = self._read(identity, f"SELECT {FACT_COLUMNS} FROM facts WHERE {seen} AND key = ? "
                                    "ORDER BY version, created_at, seq", (*params, key))
        return [fact_from_row(r) for r in rows]

    def fact_ids_present(self, ids):
        from .backend import MAINTENANCE

        return self._present(MAINTENANCE, list(ids))

    # -- profile and audit ------------------------------------------------------
    def get_profile(self, identity):
        owner, params = self._owner(identity.tenant, identity.user)
        rows = self._read(identity, f"SELECT {PROFILE_COLUMNS} FROM profile_sections WHERE {owner}", params)
        return Profile({r[0]: profile_section_from_row(r) for r in rows})

    def put_profile_section(self, identity, section):
        self._ids(section.name)
        with self.transaction():
            self._write(identity,
                        f"INSERT INTO profile_sections (tenant, user_id, {PROFILE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (tenant, user_id, section) DO UPDATE SET summary = excluded.summary, "
                        "updated_at = excluded.updated_at, source_message_ids = excluded.source_message_ids, "
                        "sentences = excluded.sentences",
                        profile_section_params(identity, section, self._ts))

    def record_audit(self, identity, entries):
        self._ids(*(v for e in entries for v in (e.fact_id, e.content_hash, e.message_id, e.action, e.code)))
        with self.transaction():
            self._write_many(identity,
                             "INSERT INTO audit (tenant, user_id, agent, at, action, code, reason, fact_id, content_hash, "
                             "content, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             [(identity.tenant, identity.user, identity.agent, self._ts(e.at), e.action, e.code,
                               e.reason, e.fact_id, e.content_hash, e.content, e.message_id) for e in entries])

    def audit_log(self, identity, *, limit=100):
        scope, params = self._scope(identity)
        rows = self._read(identity, "SELECT at, action, code, reason, fact_id, content_hash, content, message_id "
                                    f"FROM audit WHERE {scope} ORDER BY seq DESC LIMIT ?", (*params, self._limit(limit)))
        return [AuditEntry(as_time(r[0]), *r[1:]) for r in rows]

    # -- derived indexes ----------------------------------------------------------
    def reindex(self, *, progress: Progress | None = None) -> int:
        """Rebuild the keyword index from committed facts and episodes, in one transaction."""
        return self.keyword_index.rebuild(progress)
