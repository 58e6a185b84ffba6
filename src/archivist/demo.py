"""The offline demo (seed 000 §8): one conversation through filter → gate → store →
reopen → rebuild the index → search → render, with scripted candidates and no model."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from .memory import Memory

USER = "alice"

TURN_1: list[dict[str, Any]] = [
    {"id": "m0", "role": "user", "content": "长期记忆：用户喜欢非常详细的解释。",
     "metadata": {"origin": "memory", "hide_from_ui": True}},
    {"id": "m1", "role": "user",
     "content": "<current_uploads>/tmp/uploads/api.log</current_uploads>"
                "我主要做 Python 后端开发，平时请用中文解释技术问题。这次回复简短一点。"
                "验证通过后你可以直接提交并推送。"},
    {"id": "m2", "role": "assistant", "content": "",
     "tool_calls": [{"name": "read_file", "args": {"path": "app/db.py"}, "id": "call-1"}]},
    {"id": "m3", "role": "tool", "content": "DATABASE_URL=postgresql://... (config file)"},
    {"id": "m4", "role": "assistant", "content": "已定位问题：查询漏加了租户条件，修改尚未验证。"},
    {"id": "m5", "role": "user", "content": "好的，谢谢！"},
    {"id": "m6", "role": "assistant", "content": "不客气。"},
]

CANDIDATES_1: list[dict[str, Any]] = [
    {"content": "用户主要做 Python 后端开发。", "category": "context", "scope": "user", "durability": "durable",
     "authority": "descriptive", "confidence": 0.9, "evidence_message_id": "m1", "evidence_text": "我主要做 Python 后端开发"},
    {"key": "response_language", "content": "用户偏好用中文解释技术问题。", "category": "preference",
     "scope": "user", "durability": "durable", "authority": "descriptive", "confidence": 0.9,
     "evidence_message_id": "m1", "evidence_text": "平时请用中文解释技术问题"},
    {"key": "reply_length", "content": "用户要求本次回复简短。", "category": "preference",
     "scope": "thread", "durability": "temporary", "authority": "descriptive", "confidence": 0.9,
     "evidence_message_id": "m1", "evidence_text": "这次回复简短一点"},
    {"key": "push_permission", "content": "用户允许验证后直接提交并推送。", "category": "context",
     "scope": "user", "durability": "durable", "authority": "transactional", "confidence": 0.95,
     "evidence_message_id": "m1", "evidence_text": "验证通过后你可以直接提交并推送"},
]

PROFILE_1 = [{"section": "work_context", "summary": "用户主要从事 Python 后端开发。",
              "scope": "user", "authority": "descriptive", "source_message_ids": ["m1"]}]

TURN_2: list[dict[str, Any]] = [
    {"id": "m7", "role": "user", "content": "不对，其实我希望你先给结论，再补充必要解释。"},
    {"id": "m8", "role": "assistant", "content": "明白，以后先给结论。"},
]

CANDIDATES_2: list[dict[str, Any]] = [
    {"key": "answer_structure", "content": "用户希望先看结论，再看必要解释。", "category": "correction",
     "scope": "user", "durability": "durable", "authority": "descriptive", "confidence": 0.92,
     "evidence_message_id": "m7", "evidence_text": "我希望你先给结论，再补充必要解释"},
]


def run_demo(db: str | Path | None = None) -> dict[str, Any]:
    """Run the scenario on the store ``db`` (a temporary one by default) and return the
    summary that ``archivist demo --json`` prints. A kept store also gets a standing
    preference, so that ``archivist context`` has something to show."""
    with tempfile.TemporaryDirectory(prefix="archivist-demo-") as tmp:
        path = Path(db) if db else Path(tmp) / "memory.db"
        if path.exists():
            from .errors import InvalidInput

            raise InvalidInput(f"{path} exists; the demo only writes a new store")
        mem = Memory.open(path)
        alice = mem.scope(tenant="default", user=USER, agent="default")
        first = alice.apply(CANDIDATES_1, TURN_1, thread_id="t1", profile_updates=PROFILE_1)
        second = alice.apply(CANDIDATES_2, TURN_2, thread_id="t2")
        mem.close()

        mem = Memory.open(path)  # reopen: everything comes back from the file
        indexed = mem.reindex()
        alice = mem.scope(tenant="default", user=USER, agent="default")
        bob = mem.scope(tenant="default", user="bob", agent="default")
        results = [h.fact.content for h in alice.search("中文", k=5)]
        auto = alice.render(mode="auto", budget=900)
        tool = alice.render(mode="tool", budget=900)
        summary = {
            "filtered_roles": first.filtered.roles if first.filtered else [],
            "dropped": [{"id": mid, "reason": why} for mid, why in (first.filtered.dropped if first.filtered else ())],
            "candidates": len(CANDIDATES_1),
            "saved": len(first.saved),
            "saved_facts": [f.content for f in first.saved],
            "rejected": [{"content": c.get("content") or c.get("summary"), "reason": str(r)} for c, r in first.rejected],
            "correction": [f.content for f in second.saved],
            "reindexed": indexed,
            "search": {"query": "中文", "results": results},
            "other_user_search": [h.fact.content for h in bob.search("中文", k=5)],
            "auto": {"tokens": auto.tokens, "text": auto.text},
            "tool": {"tokens": tool.tokens, "text": tool.text},
        }
        if db:
            alice.set_preference("language", "中文", source="user")
        mem.close()
        return summary
