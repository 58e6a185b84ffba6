"""The offline demo, both halves on the embedded default, in seconds and with no model.

Memory (seed 000 §8): one conversation through filter → gate → store, with the
candidates an extractor would propose scripted (an LLM's, including a one-off grant and a
thread-only request the gate must refuse) → reopen → rebuild the index → recall by
meaning beside recall by words → render. Context: one model call's view of a debugging
turn under a budget — protected zone whole, history trimmed, evidence as a bounded
excerpt — with its trace and one ``why``."""

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


MEANING_QUERY = "How should I explain things to this user?"  # no word in common with what answers it

SYSTEM = "You are a coding assistant. Suggest diagnostics only; never restart services."
TOOLS = [{"name": "query_metrics", "description": "Read a service metric over a time window.",
          "parameters": {"type": "object", "properties": {"service": {"type": "string"},
                                                          "metric": {"type": "string"}}}}]
EARLIER = [
    ("部署流水线昨天为什么失败了？", "构建阶段的依赖缓存过期了，重新拉取后就通过了。"),
    ("staging 的数据库迁移跑完了吗？", "跑完了，共 14 个迁移，耗时 3 分钟，没有报错。"),
    ("帮我看看 orders 服务的错误率。", "过去一小时错误率 0.3%，主要是客户端取消的请求。"),
    ("payments 服务最近有变更吗？", "周一合并了一个连接池的改动：最大连接数从 50 调到了 20。"),
    ("连接池改小会有什么影响？", "并发高的时候请求会排队等待连接，延迟会上升。"),
    ("checkout 调 payments 的超时是多少？", "配置里是 5 秒，失败后重试 3 次。"),
    ("今天的流量和平时比怎么样？", "上午 10 点开始比平时高 40%，有一个促销活动。"),
    ("有告警吗？", "10:02 起 checkout-api 的 p99 延迟告警一直在响。"),
]
HISTORY = [m for i, (asked, answered) in enumerate(EARLIER) for m in (
    {"id": f"h{i}u", "role": "user", "content": asked}, {"id": f"h{i}a", "role": "assistant", "content": answered})]
LOG = "\n".join(f"10:{m:02d}:11 checkout-api p99=8.{m % 10}s upstream=payments timeout=5s retries=3"
                for m in range(60))
REQUEST = "为什么 checkout 超时？"
BUDGET = 1300


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
        by_meaning = [{"kind": h.kind, "score": round(h.score, 3), "content": h.fact.content}
                      for h in alice.search(MEANING_QUERY, k=3)]
        by_words = [h.fact.content for h in alice.search(MEANING_QUERY, k=3, mode="keyword")]
        auto = alice.render(mode="auto", budget=900)
        tool = alice.render(mode="tool", budget=900)
        view = alice.context(REQUEST, system=SYSTEM, tools=TOOLS, history=HISTORY,
                             evidence=[{"id": "checkout-log", "source": "tool:read_log", "text": LOG}], budget=BUDGET)
        trace = view.trace.as_dict()
        kept_history = sum(1 for e in trace["entries"] if e["section"] == "history" and e["selected"])
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
            "embedder": mem.embedder.name if mem.embedder else None,
            "by_meaning": {"query": MEANING_QUERY, "hybrid": by_meaning, "keyword_only": by_words},
            "context": {"request": REQUEST, "budget": BUDGET, "tokens": view.tokens, "trace_id": view.trace.id,
                        "messages": view.to_messages(), "history_kept": kept_history, "history_given": len(HISTORY),
                        "entries": [{k: e.get(k) for k in ("section", "id", "tokens", "selected", "reason")}
                                    for e in trace["entries"]],
                        "why": {"checkout-log": alice.why(view.trace.id, "checkout-log"),
                                "Python": alice.why(view.trace.id, "Python")}},
        }
        if db:
            alice.set_preference("language", "中文", source="user")
        mem.close()
        return summary
