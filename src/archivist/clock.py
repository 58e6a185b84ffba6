"""Time is a dependency: everything that asks "now?" asks an injected clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware (UTC)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock for tests and replays: it only moves when told to."""

    def __init__(self, start: datetime | str) -> None:
        self._now = parse_time(start) if isinstance(start, str) else ensure_utc(start)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime | str) -> None:
        self._now = parse_time(when) if isinstance(when, str) else ensure_utc(when)

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


def ensure_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC; aware ones are converted to UTC. A valid time
    whose UTC form falls outside years 1–9999 ("9999-12-31T23:59:59-23:59") becomes the
    nearest instant that exists there: a validity ending after year 9999 never ends,
    one ending before year 1 has ended."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        return (datetime.max if value.year == datetime.max.year else datetime.min).replace(tzinfo=UTC)


def parse_time(text: str) -> datetime:
    value = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    return value if value.tzinfo is UTC else ensure_utc(value)
