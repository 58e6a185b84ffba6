"""Reading JSON Lines files whose every line is an object, with line numbers in errors."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def json_objects(lines: Iterable[str], source: str, error: type[Exception]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; ``error`` names the line otherwise."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{source}:{number}: not JSON ({exc.msg})") from None
        except RecursionError:
            raise error(f"{source}:{number}: nested too deeply to read") from None
        if not isinstance(data, dict):
            raise error(f"{source}:{number}: a line must be a JSON object")
        yield number, data
