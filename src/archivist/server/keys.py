"""API keys: random secrets shown once, stored as SHA-256 hashes, each mapped to one
tenant, the users and agents it may act for (``*`` for any), and a role."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from ..errors import InvalidInput
from ..model import new_id
from ..storage.base import Store

ROLES = ("reader", "writer", "admin")
PREFIX = "ak_"


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Principal:
    """Who is calling, as the key says; every request's identity comes from here."""

    key_id: str
    tenant: str
    users: tuple[str, ...]
    agents: tuple[str, ...]
    role: str
    project: str | None = None  # the project a request works in (X-Project): never a permission

    def may_act_for(self, user: str, agent: str) -> bool:
        return ("*" in self.users or user in self.users) and ("*" in self.agents or agent in self.agents)

    def can(self, role: str) -> bool:
        return ROLES.index(self.role) >= ROLES.index(role)


def create_key(store: Store, *, tenant: str, users: list[str], agents: list[str] | None = None, role: str = "writer",
               label: str | None = None, at=None) -> tuple[str, str]:
    """Create a key; returns (key id, secret). The secret is not stored and cannot be shown again."""
    if role not in ROLES:
        raise InvalidInput(f"role must be one of {', '.join(ROLES)}")
    if not tenant or not users:
        raise InvalidInput("a key needs a tenant and at least one user (or '*')")
    from datetime import UTC, datetime

    secret = PREFIX + secrets.token_urlsafe(32)
    key_id = new_id()
    store.put_api_key(key_id, hash_key(secret), tenant, list(users), list(agents or ["*"]), role, label,
                      at or datetime.now(UTC))
    return key_id, secret


def principal_for(store: Store, secret: str) -> Principal | None:
    found = store.find_api_key(hash_key(secret)) if secret else None
    if found is None:
        return None
    return Principal(found["id"], found["tenant"], tuple(found["users"]), tuple(found["agents"]), found["role"])
