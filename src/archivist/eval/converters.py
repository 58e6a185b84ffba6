"""Converters from published benchmarks to the retrieval-evaluation format (one JSON
object per pool and line; see :mod:`archivist.eval.retrieval`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInput

LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def parse_locomo_time(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' -> ISO-8601 (UTC)."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).strftime("%Y-%m-%dT%H:%M:00+00:00")
        except ValueError:
            continue
    return None


def locomo(path: str | Path, stats: dict[str, int] | None = None) -> Iterator[dict[str, Any]]:
    """One pool per conversation, one item per dialog turn (the paper's item text:
    ``{speaker} said, "{text}"`` plus the image caption when there is one); a session
    is a thread (``meta.thread``), so the product reads each turn in its conversation.
    For the conversation path (:mod:`archivist.eval.conversations`) ``meta`` also holds
    the words as said (``said``), the shared image's caption (``shared``) and the
    speaker's role: speaker A is the user, speaker B the assistant. Questions whose
    evidence ids do not resolve are skipped and counted in ``stats``."""
    stats = stats if stats is not None else {}
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    for conv in data:
        c = conv["conversation"]
        items, ids = [], set()
        sessions = sorted((int(m.group(1)) for k in c if (m := re.fullmatch(r"session_(\d+)", k))))
        roles = {c.get("speaker_a"): "user", c.get("speaker_b"): "assistant"}
        for n in sessions:
            when = parse_locomo_time(c.get(f"session_{n}_date_time", "")) or None
            for turn in c[f"session_{n}"]:
                text = f'{turn["speaker"]} said, "{turn["text"]}"'
                if turn.get("blip_caption"):
                    text += f' and shared {turn["blip_caption"]}'
                meta = {"session": n, "thread": f"session_{n}", "speaker": turn["speaker"], "said": turn["text"],
                        "role": roles.get(turn["speaker"], "user")}
                if turn.get("blip_caption"):
                    meta["shared"] = turn["blip_caption"]
                items.append({"id": turn["dia_id"], "text": text, "time": when, "meta": meta})
                ids.add(turn["dia_id"])
        queries = []
        for i, qa in enumerate(conv["qa"]):
            gold = [e for e in (qa.get("evidence") or []) if e in ids]
            if not gold:
                stats["unresolvable"] = stats.get("unresolvable", 0) + 1
                continue
            if len(gold) < len(qa.get("evidence") or []):
                stats["partially_resolved"] = stats.get("partially_resolved", 0) + 1
            queries.append({"id": f"{conv.get('sample_id', 'conv')}-q{i}", "text": qa["question"], "gold": gold,
                            "category": LOCOMO_CATEGORIES.get(qa.get("category"), str(qa.get("category"))),
                            "time": None, "answer": None if qa.get("answer") is None else str(qa["answer"])})
        yield {"pool": str(conv.get("sample_id", len(items))), "language": "en", "items": items, "queries": queries}


_SPEAKER = re.compile(r"^<([^>]+)>:\s*")


def madial(directory: str | Path, lang: str = "zh") -> Iterator[dict[str, Any]]:
    """One pool per user; the query is the dialogue before the test turn, the gold is
    ``relevant-id`` (the MADial-Bench protocol). One query per test turn. A memory's
    scene and emotion fields become its ``meta.context``."""
    if lang not in ("zh", "en"):
        raise InvalidInput("lang must be zh or en")
    root = Path(directory) / ("ch" if lang == "zh" else "en")
    prefix = "MADial-Bench-zh" if lang == "zh" else "MADial-Bench-en"
    memories: dict[str, dict[str, Any]] = {}
    for line in (root / f"{prefix}-memory.json").read_text(encoding="utf-8").splitlines():
        if line.strip():
            for mid, m in json.loads(line).items():
                memories[str(mid)] = m
    zh_memories = {}
    if lang == "en":  # the English file has no user ids; they are the Chinese file's
        for line in (Path(directory) / "ch" / "MADial-Bench-zh-memory.json").read_text(encoding="utf-8").splitlines():
            if line.strip():
                zh_memories.update({str(k): v for k, v in json.loads(line).items()})
    users: dict[str, dict[str, Any]] = {}
    for mid, m in memories.items():
        user = str(m.get("user-id") or zh_memories.get(mid, {}).get("user-id") or "unknown")
        pool = users.setdefault(user, {"pool": f"user-{user}", "language": lang, "items": [], "queries": []})
        time = f"{m['time']}T00:00:00+00:00" if m.get("time") else None
        labels = " ".join(x for x in (m.get("scene"), m.get("emotion")) if x)
        meta = {"scene": m.get("scene"), "emotion": m.get("emotion")}
        if labels:
            meta["context"] = labels  # the memory record's own scene and emotion fields
        pool["items"].append({"id": mid, "text": m["event"], "time": time, "meta": meta})
    for number, line in enumerate((root / f"{prefix}-dialogue.json").read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        d = json.loads(line)
        d.setdefault("id", number)
        user = str(d.get("user-id") or "unknown")
        if user not in users:
            continue
        for turn in d["test-turn"]:
            lines = [_SPEAKER.sub("", t.strip()).strip('"') for t in d["dialogue"][1:turn]]
            users[user]["queries"].append({
                "id": f"d{d['id']}-t{turn}", "text": "\n".join(x for x in lines if x),
                "gold": [str(g) for g in d["relevant-id"] if str(g) in memories], "category": None, "time": None,
            })
    yield from users.values()
