"""The package's layers, checked: a module imports only from its own layer or below.

    model (+ clock, errors, tokens, jsonl) < index < storage, retrieval, pipeline < write, ports
    < lifecycle, context < memory < integrations, server, client, cli, config, mcp_server, eval, demo, testing

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import archivist

ROOT = Path(archivist.__file__).parent
LAYERS = {
    "model": 0, "clock": 0, "errors": 0, "tokens": 0, "jsonl": 0,
    "index": 1,
    "storage": 2, "retrieval": 2, "pipeline": 2,
    "write": 3, "ports": 3,
    "lifecycle": 4, "context": 4,
    "memory": 5,
    "integrations": 6, "server": 6, "client": 6, "cli": 6, "config": 6, "mcp_server": 6, "eval": 6, "demo": 6, "testing": 6,
    "__init__": 7,
}


def _part(module: str) -> str:
    return module.split(".")[1] if module.count(".") else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    module = "archivist." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] if node.module or not node.level else [f"{target}.{a.name}" for a in node.names]
            found += [(node.lineno, n) for n in names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, n) for line, n in found if n.startswith("archivist.") or n == "archivist"]


def test_no_module_imports_from_a_higher_layer():
    problems = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        own = _part("archivist." + ".".join(rel.with_suffix("").parts))
        for line, target in _imports(path):
            if target == "archivist":
                problems.append(f"{rel}:{line} imports the package root")
                continue
            theirs = _part(target)
            if LAYERS[theirs] > LAYERS[own]:
                problems.append(f"{rel}:{line} ({own}, layer {LAYERS[own]}) imports {target} (layer {LAYERS[theirs]})")
    assert not problems, "\n".join(problems)


def test_every_top_level_part_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts <= set(LAYERS), parts - set(LAYERS)


def test_storage_backends_depend_on_the_shared_core_never_on_each_other():
    """``storage/core`` is written once and knows no backend; a backend folder imports
    the core (and the shared records) but never another backend."""
    storage = ROOT / "storage"
    problems = []
    for path in sorted(storage.rglob("*.py")):
        folder = path.relative_to(storage).parts[0] if len(path.relative_to(storage).parts) > 1 else ""
        for line, target in _imports(path):
            parts = target.split(".")
            if parts[:2] != ["archivist", "storage"] or len(parts) < 3:
                continue
            theirs = parts[2]
            if folder == "core" and theirs in ("sqlite", "postgres"):
                problems.append(f"storage/{path.relative_to(storage)}:{line} imports {target}")
            if folder in ("sqlite", "postgres") and theirs in ("sqlite", "postgres") and theirs != folder:
                problems.append(f"storage/{path.relative_to(storage)}:{line} imports {target}")
    assert problems == []


def test_no_storage_file_is_over_400_lines():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in (ROOT / "storage").rglob("*.py")}
    assert {p: n for p, n in sizes.items() if n > 400} == {}


def test_nothing_below_memory_reaches_into_another_objects_private_attributes():
    """Layers under ``memory`` hold a memory or a scope by small protocols
    (``archivist.ports``, ``pipeline.queue.QueueMemory``): they use what those offer,
    never ``scope._store`` or ``memory._holders``."""
    below = {name for name, layer in LAYERS.items() if layer < LAYERS["memory"]}
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0].removesuffix(".py") not in below:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
