"""Reading JSON Lines files whose every line is an object, with line numbers in errors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def json_objects(lines: Iterable[str], source: str, error: type[Exception],
                 bad: list[str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; ``error`` names the line otherwise —
    or, given ``bad``, the line's number and reason are added to it and reading goes on."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            why = None if isinstance(data, dict) else "a line must be a JSON object"
        except json.JSONDecodeError as exc:
            why = f"not JSON ({exc.msg})"
        except RecursionError:
            why = "nested too deeply to read"
        if why is None:
            yield number, data
        elif bad is None:
            raise error(f"{source}:{number}: {why}")
        else:
            bad.append(f"{source}:{number}: {why}")
