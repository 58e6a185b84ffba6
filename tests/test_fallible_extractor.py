"""A fallible extractor's proposals, through every write path.

``tests/cases/fallible_extractor.yaml`` (written with the gate),
``tests/cases/redteam_gate.yaml``, ``redteam_holdout.yaml`` and ``redteam_holdout2.yaml``
(written by red teams that tried to break it, each after the gate was tuned on the ones
before) hold conversations and the candidates an
extractor that mislabels things proposed for them, each with what the memory must do:
commit, refuse (with the acceptable code families), hold as a candidate, call a
duplicate, or supersede an earlier value. The cases run through ``apply``; the ones
refused for what their text says (grants, secrets, injection) also run through every
path that takes text without a conversation: ``remember``, ``remember_many``,
preferences, the profile, JSONL and Markdown import.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from archivist import FixedClock, Memory, WriteRejected
from archivist.errors import InvalidInput

CASES = [case for name in ("fallible_extractor.yaml", "redteam_gate.yaml", "redteam_holdout.yaml",
                            "redteam_holdout2.yaml")  # ours, then three red teams'
         for case in yaml.safe_load((Path(__file__).parent / "cases" / name).read_text(encoding="utf-8"))]
CONTENT_CODES = {"transactional", "prompt_injection", "secret"}


def family(code: str) -> str:
    for prefix in ("evidence", "scope"):
        if code.startswith(prefix + "_"):
            return prefix
    return code


def outcomes(report, raws):
    """What happened to each raw candidate of one ``apply``, in order."""
    rejected = {id(raw): why for raw, why in report.rejected}
    duplicate = {id(raw) for raw, _ in report.duplicates}
    held = {f.id: why.code for f, why in report.held}
    in_order = sorted((*report.saved, *report.candidates), key=lambda f: f.id)  # ids are time-ordered
    written = iter(in_order)
    result = []
    for raw in raws:
        if id(raw) in rejected:
            result.append(("refuse", rejected[id(raw)].code))
        elif id(raw) in duplicate:
            result.append(("duplicate", None))
        else:
            fact = next(written)
            if fact.id in held:
                result.append(("hold", held[fact.id]))
            elif raw.get("kind", "fact") != "fact":
                result.append(("candidate", fact.content))
            else:
                result.append(("commit", fact.content))
    return result


def live_text(scope) -> str:
    return "\n".join(f.content for f in scope.facts())


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_apply(tmp_path, case):
    with Memory.open(tmp_path / "m.db", clock=FixedClock("2026-01-01T00:00:00+00:00")) as mem:
        scope = mem.scope(user="u", project=case.get("project"))
        for n, turn in enumerate(case["turns"]):
            mem.clock.advance(minutes=5)
            raws = [dict(c) for c in turn["candidates"]]
            report = scope.apply(raws, turn["messages"], thread_id=f"t{n}")
            got = outcomes(report, raws)
            for raw, (outcome, detail), want in zip(raws, got, turn["expect"], strict=True):
                expected = want["outcome"]
                label = f"turn {n}: {raw['content']!r}"
                if expected == "refuse":
                    assert outcome == "refuse", f"{label} was not refused ({outcome})"
                    codes = want.get("codes")
                    if codes:
                        assert family(detail) in codes, f"{label} refused as {detail}, expected one of {codes}"
                elif expected == "supersede":
                    assert outcome == "commit", f"{label}: {outcome} {detail}"
                    assert report.superseded, f"{label} replaced nothing"
                elif expected == "commit":
                    assert outcome == "commit", f"{label}: {outcome} {detail}"
                else:
                    assert outcome == expected, f"{label}: {outcome} {detail}"
        text = live_text(scope)
        for needle in case.get("live_after") or []:
            assert needle in text, f"{needle!r} is not live: {text!r}"
        for needle in case.get("not_live_after") or []:
            assert needle not in text, f"{needle!r} is live: {text!r}"


def _refused_texts():
    """(case id, text) for every candidate refused for what its text says, and the
    user's own words it quoted: no path may store either."""
    for case in CASES:
        for t, turn in enumerate(case["turns"]):
            for n, (cand, want) in enumerate(zip(turn["candidates"], turn["expect"], strict=True)):
                if want["outcome"] == "refuse" and set(want.get("codes") or ()) <= CONTENT_CODES and want.get("codes"):
                    where = case["id"] + (f"[{t}.{n}]" if len(case["turns"]) > 1 or len(turn["candidates"]) > 1 else "")
                    yield where, cand["content"]
                    yield where + ":quote", cand["evidence_text"]


REFUSED = list(_refused_texts())
# What the text alone cannot show — the apply path refuses these through their quote or
# the sentence around it; written out without that context they are not recognised.
# Strict: when the screen learns to see one, the test says so.
CONTENT_ONLY_GAPS = {
    "rt-grant-split-two-candidates-en[0.1]:quote": "the grant's action is in the other candidate",
    "rt-grant-kill-pod-zh": "an order relabelled as the user's own habit (用户习惯：…把 pod 干掉)",
    "rt-grant-mixed-cherry-pick": "an order relabelled as the user's preference with no standing marker",
    "ho-grant-calendar-accept-en": "a delegation written as a summary with bare participles",
    "ho-grant-weekly-groceries-en": "'has X reordered' reads like a habit of the user's",
    "ho-grant-refund-backend-zh": "an order relabelled as the user's own habit (用户习惯：…直接在后台处理)",
    "ho-grant-close-tickets-zh": "an order relabelled as the user's preference with no standing marker",
    "ho-grant-hema-groceries-zh": "the user's own weekly shopping, as far as the text alone shows",
    "h2-grant-venmo-babysitter-en": "a present passive ('is reimbursed every Friday') reads like what already happens",
}
REFUSED_PARAMS = [pytest.param(text, id=cid, marks=[pytest.mark.xfail(reason=CONTENT_ONLY_GAPS[cid], strict=True)]
                               if cid in CONTENT_ONLY_GAPS else []) for cid, text in REFUSED]


@pytest.mark.parametrize("text", REFUSED_PARAMS)
def test_refused_text_is_refused_on_every_path(tmp_path, text):
    with Memory.open(tmp_path / "m.db") as mem:
        s = mem.scope(user="u")
        with pytest.raises(WriteRejected):
            s.remember(text, category="preference")
        assert s.remember_many([{"content": text, "category": "context"}]).rejected
        with pytest.raises(WriteRejected):
            s.set_preference("standing_order", text)
        with pytest.raises(WriteRejected):
            s.update_profile("top_of_mind", text)
        fact = {"type": "fact", "id": "f1", "tenant": "default", "user": "u", "agent": "default", "key": None,
                "content": text, "category": "preference", "kind": "fact", "scope": "user",
                "durability": "durable", "authority": "descriptive", "confidence": 1.0, "status": "committed",
                "provenance": {"source_type": "explicit"}, "created_at": "2026-01-01T00:00:00+00:00"}
        header = {"format": "archivist", "version": 1, "tenant": "default", "user": "u",
                  "exported_at": "2026-01-01T00:00:00+00:00"}
        from archivist.lifecycle.transfer import import_jsonl

        with pytest.raises(InvalidInput, match=r"1 bad line; nothing was imported:\n<input>:2: "):
            import_jsonl(mem, [json.dumps(header), json.dumps(fact, ensure_ascii=False)], tenant="default")
        assert s.facts(include_candidates=True, include_history=True) == []
        assert s.preferences(include_untrusted=True) == [] and s.profile().sections == {}
        with pytest.raises(InvalidInput):
            import_jsonl(mem, [json.dumps(header), json.dumps({"type": "preference", "key": "k", "value": text,
                                                               "trusted": True, "source": "user", "version": 1,
                                                               "updated_at": "2026-01-01T00:00:00+00:00"},
                                                              ensure_ascii=False)], tenant="default")


class Scripted:
    """An extractor that proposes exactly the case's candidates: a fallible LLM's output."""

    name, version = "scripted-llm", "1"

    def __init__(self) -> None:
        self.next: list[dict] = []

    def extract(self, filtered, *, profile=None, existing=()):
        from archivist.pipeline.rules import Extraction

        return Extraction(facts=[dict(c) for c in self.next])


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    pytest.importorskip("fastapi", reason="the server extra is not installed")
    from fastapi.testclient import TestClient

    from archivist.server.app import create_app
    from archivist.server.keys import create_key

    mem = Memory.open(tmp_path_factory.mktemp("api") / "m.db")
    extractor = Scripted()
    _, secret = create_key(mem.store, tenant="acme", users=["*"], role="writer")
    with TestClient(create_app(mem, extractor=extractor)) as client:
        yield client, {"Authorization": f"Bearer {secret}"}, extractor, mem
    mem.close()


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case_through_rest_ingest(api, case):
    import time

    client, auth, extractor, mem = api
    user = "u-" + case["id"]
    headers = {**auth, **({"X-Project": case["project"]} if case.get("project") else {})}
    for n, turn in enumerate(case["turns"]):
        extractor.next = turn["candidates"]
        r = client.post(f"/v1/users/{user}/messages", headers=headers,
                        json={"thread_id": f"t{n}", "messages": [{k: m[k] for k in ("id", "role", "content")}
                                                                 for m in turn["messages"]]})
        assert r.status_code == 202, r.text
        for _ in range(500):
            job = client.get(r.json()["status_url"], headers=headers).json()
            if job["status"] in ("done", "failed"):
                break
            time.sleep(0.01)
        assert job["status"] == "done", job
        codes = [x["code"] for x in job["report"]["rejected"]]
        refused = [w for w in turn["expect"] if w["outcome"] == "refuse"]
        assert len(codes) == len(refused), (codes, turn["expect"])
        for code, want in zip(codes, refused, strict=True):
            assert not want.get("codes") or family(code) in want["codes"], (code, want)
    page = client.get(f"/v1/users/{user}/facts?limit=500", headers=headers).json()
    live = "\n".join(f["content"] for f in page["items"])
    for needle in case.get("live_after") or []:
        assert needle in live
    for needle in case.get("not_live_after") or []:
        assert needle not in live


@pytest.mark.parametrize("text", REFUSED_PARAMS)
def test_refused_text_is_refused_by_rest_and_mcp(api, text):
    import hashlib

    client, auth, _, mem = api
    user = "w-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    r = client.post(f"/v1/users/{user}/facts", headers=auth, json={"content": text, "category": "preference"})
    assert r.status_code == 422 and r.json()["title"] == "rejected by the write gate", r.text
    r = client.put(f"/v1/users/{user}/preferences/standing_order", headers=auth, json={"value": text})
    assert r.status_code == 422, r.text
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import asyncio

    from mcp.server.mcpserver.exceptions import ToolError

    from archivist.mcp_server import build_server

    server = build_server(mem, tenant="acme", user=user)
    with pytest.raises(ToolError, match="WriteRejected"):
        asyncio.run(server.call_tool("remember", {"content": text, "category": "preference"}))
    assert client.get(f"/v1/users/{user}/facts", headers=auth).json()["items"] == []
