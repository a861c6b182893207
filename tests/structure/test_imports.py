"""The package's import structure: no cycle between its packages, imports at the top.

Read from the source with ``ast`` (function-level imports included), so a cycle hidden inside a
function counts. A function-level import is allowed only with a comment saying why, in the
comment lines just above it (or above the block of imports it belongs to), starting
``# Deferred:``; the usual reason is cost (torch, sentence-transformers and FastAPI take
seconds to import).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "citewall"
DEFERRED = "# Deferred:"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.relative_to(PACKAGE).parts:
            continue  # Alembic loads these scripts itself
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(p for p in parts if p != "__init__")] = path
    return out


def _unit(module: str) -> str:
    """The package a module belongs to: ``citewall.retrieval.fusion`` -> ``retrieval``;
    top-level modules (``citewall.config``) are their own unit."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if node.module == "citewall":
            return [f"citewall.{a.name}" for a in node.names]
        return [node.module] if node.module.startswith("citewall.") else []
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("citewall.")]
    return []


def _graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(node):
                if _unit(target) != _unit(module):
                    edges[_unit(module)].add(_unit(target))
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle's nodes, found by DFS from each node (the graph is tiny)."""
    found: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                i = path.index(min(path))
                found.add(tuple(path[i:] + path[:i]))
            elif nxt not in path and nxt > start:
                walk(start, nxt, [*path, nxt])

    for start in sorted(edges):
        walk(start, start, [start])
    return [list(c) for c in sorted(found)]


#: citewall's packages from the top down (docs/architecture.md): each imports only those below.
LAYERS = (
    "cli",
    "evals",
    "api",
    "chat",
    "runtime",
    "auth",
    "boundary",
    "generation",
    "ingest",
    "citations",
    "storage",
    "retrieval",
    "kb",
    "text",
    "config",
    "errors",
)


def _upward(edges: dict[str, set[str]]) -> list[str]:
    rank = {name: i for i, name in enumerate(LAYERS)}
    return [
        f"{a} -> {b}"
        for a, targets in sorted(edges.items())
        for b in sorted(targets)
        if b != "__version__" and rank.get(a, -1) >= rank.get(b, len(LAYERS))
    ]


def test_no_import_cycle_between_packages() -> None:
    assert _cycles(_graph()) == []


def test_packages_import_only_the_layers_below_them() -> None:
    edges = _graph()
    assert set(edges) | {t for ts in edges.values() for t in ts} - {"__version__"} <= set(LAYERS)
    assert _upward(edges) == []
    # Negative control: the check sees an upward import.
    assert _upward({"retrieval": {"chat"}}) == ["retrieval -> chat"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    # Negative control: the check above can fail.
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _undocumented_deferred_imports(source: str, name: str) -> list[str]:
    tree = ast.parse(source)
    lines = source.splitlines()
    bad = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(func):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            row = node.lineno - 1
            # Walk up over the import block (other imports, continuation lines) to its comment.
            above = row - 1
            while above >= 0 and (
                lines[above].strip().startswith(("from ", "import ", ")"))
                or lines[above].strip().endswith(",")
                or lines[above].strip() == ""
            ):
                above -= 1
            comments = []
            while above >= 0 and lines[above].strip().startswith("#"):
                comments.append(lines[above].strip())
                above -= 1
            if not any(c.startswith(DEFERRED) for c in comments):
                bad.append(f"{name}:{node.lineno}: {lines[row].strip()}")
    return bad


def test_function_level_imports_say_why() -> None:
    bad = []
    for module, path in _modules().items():
        bad += _undocumented_deferred_imports(path.read_text(encoding="utf-8"), module)
    assert bad == []


def test_the_deferred_import_check_flags_a_bare_one() -> None:
    source = "def f():\n    import json\n\ndef g():\n    # Deferred: slow\n    import json\n"
    assert _undocumented_deferred_imports(source, "m") == ["m:2: import json"]
