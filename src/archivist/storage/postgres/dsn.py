"""A PostgreSQL DSN in messages: its password scrubbed wherever it could show (the store's
path, libpq's own errors), and a failed connection told apart as an outage (try again) or a
mistake (fix the DSN)."""

from __future__ import annotations

import re

from ...errors import StoreError, StoreUnavailable


def _password_parts(dsn: str) -> list[str]:
    """The password a DSN carries, as written, and its pieces around any ``@`` (a password
    with an unencoded ``@`` is read by libpq as part of the host, and echoed as that)."""
    found = re.findall(r"\bpassword\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", dsn)
    uri = re.match(r"^[a-z][a-z0-9+.\-]*://([^/?#]*)", dsn, re.I)
    if uri and "@" in uri.group(1):
        user_info = uri.group(1).rsplit("@", 1)[0]
        if ":" in user_info:
            found.append(user_info.split(":", 1)[1])
    pieces = [p.strip("'") for p in found]
    pieces += [part for p in pieces for part in p.split("@")]
    return sorted({p for p in pieces if len(p) >= 3}, key=len, reverse=True)


def scrub(text: str, dsn: str) -> str:
    """``text`` (a driver's message, a DSN) without the password of ``dsn`` in it."""
    for part in _password_parts(dsn):
        text = text.replace(part, "***")
    return text


def redact_dsn(dsn: str) -> str:
    """The DSN without its password, for messages and ``store.path``."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        parts = conninfo_to_dict(dsn)
    except Exception:  # noqa: BLE001 - a malformed DSN is reported by connect()
        return "postgresql://(unparsable DSN)"
    if "password" in parts:
        parts["password"] = "***"
    return scrub(make_conninfo(**parts), dsn)


#: a failed connection that passes by itself: the server out of reach, or not taking
#: connections for now. libpq gives a connection's failure as text only (the system's
#: and the server's messages, in English unless their locale says otherwise).
_AWAY = re.compile(r"connection refused|no such file or directory|timeout expired|timed out|"
                   r"server closed the connection|network is unreachable|no route to host|connection reset|"
                   r"starting up|shutting down|not yet accepting connections|in recovery|"
                   r"too many (?:clients|connections)|connection slots are reserved|"
                   r"terminating connection due to administrator command", re.I)


def connect_error(where: str, exc: Exception, dsn: str = "") -> StoreError:
    """A failed connection as the store's error: the server out of reach (no answer, a
    refused or dropped connection) or not taking connections yet is
    :class:`StoreUnavailable`, worth trying again; anything else (a wrong password, no such
    database, a malformed DSN, a host name that does not resolve) is a plain
    :class:`StoreError`, as trying again would only repeat it. The DSN's password is
    never in the message."""
    text = scrub(str(exc).strip(), dsn)
    away = isinstance(exc, ConnectionError) or _AWAY.search(text)
    return (StoreUnavailable if away else StoreError)(f"{where}: cannot connect to PostgreSQL ({text})")
