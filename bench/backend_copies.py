"""Near-copied methods between the two storage backends, measured on tokens.

Each function or method of one backend's files is compared with each of the other's:
Python tokens, with docstrings and comments dropped, numbers made ``0``, SQL inside
strings split into lower-cased words and ``%s`` read as ``?`` (so the same statement
wrapped or quoted differently still matches). The similarity of a pair is the Jaccard
index of their 5-token shingles; a pair at or above ``--threshold`` (default 0.5) is
a near-copy. Functions under 40 tokens (accessors, one-line wrappers) are not compared.

    python bench/backend_copies.py                                   # the two folders now
    python bench/backend_copies.py --rev e44257e                      # the files at a commit
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORAGE = ROOT / "src" / "archivist" / "storage"
SQL_WORD = re.compile(r"%s|\?|[A-Za-z_][A-Za-z_0-9]*|[0-9]+|[^\sA-Za-z_0-9]")


def tokens(source: str) -> list[str]:
    out: list[str] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                        tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.NUMBER:
            out.append("0")
        elif tok.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)):
            body = re.sub(r"^[rbfuRBFU]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", tok.string)
            out += ["?" if w == "%s" else w.lower() for w in SQL_WORD.findall(body)]
        else:
            out.append(tok.string)
    return out


def functions(files: dict[str, str]) -> dict[str, list[str]]:
    """``file:qualified name`` → tokens of each function, docstring left out."""
    found: dict[str, list[str]] = {}
    for name, text in files.items():
        tree = ast.parse(text)
        lines = text.splitlines(keepends=True)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for child in node.body:
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        child.name = f"{node.name}.{child.name}"
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr)
                                     and isinstance(getattr(node.body[0], "value", None), ast.Constant)
                                     and isinstance(node.body[0].value.value, str)) else node.body
            if not body:
                continue
            start, end = body[0].lineno - 1, node.end_lineno
            source = "".join(lines[start:end])
            indent = min((len(ln) - len(ln.lstrip()) for ln in source.splitlines() if ln.strip()), default=0)
            source = "".join(ln[indent:] if ln.strip() else ln for ln in source.splitlines(keepends=True))
            try:
                found[f"{name}:{node.name}"] = tokens(source)
            except (tokenize.TokenError, IndentationError):
                continue
    return found


def shingles(toks: list[str], n: int = 5) -> set[tuple[str, ...]]:
    return {tuple(toks[i:i + n]) for i in range(len(toks) - n + 1)}


def pairs(left: dict[str, list[str]], right: dict[str, list[str]], *, min_tokens: int = 40):
    a = {k: shingles(v) for k, v in left.items() if len(v) >= min_tokens}
    b = {k: shingles(v) for k, v in right.items() if len(v) >= min_tokens}
    out = []
    for ka, sa in a.items():
        for kb, sb in b.items():
            union = len(sa | sb)
            if union:
                out.append((len(sa & sb) / union, ka, kb))
    return sorted(out, reverse=True), len(a), len(b)


def read(rev: str | None, paths: list[str]) -> dict[str, str]:
    if rev is None:
        return {p: (ROOT / p).read_text() for p in paths}
    return {p: subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{p}"], capture_output=True, text=True,
                              check=True).stdout for p in paths}


def backend_files(rev: str | None, backend: str) -> list[str]:
    if rev is None:
        folder = STORAGE / backend
        found = sorted(folder.glob("*.py")) if folder.is_dir() else [STORAGE / f"{backend}.py"]
        return [str(p.relative_to(ROOT)) for p in found]
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", rev,
                              "src/archivist/storage/"], capture_output=True, text=True, check=True).stdout.split()
    return [p for p in listing if p == f"src/archivist/storage/{backend}.py"
            or p.startswith(f"src/archivist/storage/{backend}/") and p.endswith(".py")]


def measure(rev: str | None = None, threshold: float = 0.5):
    left = functions(read(rev, backend_files(rev, "sqlite")))
    right = functions(read(rev, backend_files(rev, "postgres")))
    ranked, na, nb = pairs(left, right)
    return ranked, na, nb, [p for p in ranked if p[0] >= threshold]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", action="append", help="measure the files at this commit (repeatable); default: now")
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--top", type=int, default=8)
    args = ap.parse_args()
    for rev in args.rev or [None]:
        ranked, na, nb, copies = measure(rev, args.threshold)
        print(f"## {rev or 'working tree'}: {na} SQLite × {nb} PostgreSQL functions of ≥ 40 tokens; "
              f"{len(copies)} pairs at similarity ≥ {args.threshold}")
        print("| similarity | SQLite | PostgreSQL |\n|---:|---|---|")
        for sim, a, b in ranked[: args.top]:
            print(f"| {sim:.2f} | {a.split('storage/')[-1]} | {b.split('storage/')[-1]} |")
        print()
    sys.stdout.flush()


if __name__ == "__main__":
    main()
