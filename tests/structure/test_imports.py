"""The packages' import structure: no cycle between their packages, imports at the top, and the
product apart from its evaluation package.

Read from the source with ``ast`` (function-level imports included), so a cycle hidden inside a
function counts. A function-level import is allowed only with a comment saying why, in the
comment lines just above it (or above the block of imports it belongs to), starting
``# Deferred:``; the usual reason is cost (torch, sentence-transformers and FastAPI take
seconds to import).

The evaluation harness is its own package, ``citewall_evals`` (the ``evals/`` distribution), the
``evals`` layer here: it imports the product, and the product's wheel does not ship it. Only the
CLI commands that run it (``citewall eval``, ``citewall bench``) import it, inside the function.
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

from setuptools import find_namespace_packages

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "citewall"
#: The evaluation package, in the ``evals/`` distribution of the repository.
EVALS = REPO / "evals" / "citewall_evals"
DEFERRED = "# Deferred:"


def _package_modules(package: Path) -> dict[str, Path]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        if "migrations" in path.relative_to(package).parts:
            continue  # Alembic loads these scripts itself
        parts = path.relative_to(package.parent).with_suffix("").parts
        out[".".join(p for p in parts if p != "__init__")] = path
    return out


def _modules() -> dict[str, Path]:
    """Every module of the product (``citewall``) and of the evaluation package."""
    return _package_modules(PACKAGE) | _package_modules(EVALS)


def _unit(module: str) -> str:
    """The package a module belongs to: ``citewall.retrieval.fusion`` -> ``retrieval``;
    top-level modules (``citewall.config``) are their own unit; the whole evaluation package
    (``citewall_evals.*``) is one, ``evals``."""
    parts = module.split(".")
    if parts[0] == "citewall_evals":
        return "evals"
    return parts[1] if len(parts) > 1 else parts[0]


def _ours(module: str) -> bool:
    return module.startswith(("citewall.", "citewall_evals.")) or module == "citewall_evals"


def _imported(node: ast.AST) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        if node.module == "citewall":
            return [f"citewall.{a.name}" for a in node.names]
        return [node.module] if _ours(node.module) else []
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if _ours(a.name)]
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
    "handoff",
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


def _eager_evals_imports(source: str, name: str) -> list[str]:
    """Imports of the evaluation package in a product module that are not inside a function or
    an ``if TYPE_CHECKING:`` block, and any import of it outside ``citewall.cli``."""
    tree = ast.parse(source)
    lazy: set[int] = set()
    for node in ast.walk(tree):
        typing_only = isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or typing_only:
            lazy |= {id(n) for n in ast.walk(node)}
    bad = []
    for node in ast.walk(tree):
        if not any(_unit(t) == "evals" for t in _imported(node)):
            continue
        if not name.startswith("citewall.cli.") or id(node) not in lazy:
            bad.append(f"{name}:{getattr(node, 'lineno', 0)}")
    return bad


def test_the_product_imports_the_evals_package_only_lazily_from_its_cli() -> None:
    bad = []
    for module, path in _package_modules(PACKAGE).items():
        bad += _eager_evals_imports(path.read_text(encoding="utf-8"), module)
    assert bad == []
    assert not (PACKAGE / "evals").exists()
    # Negative controls: a top-level import in the CLI, any import outside it.
    top = "from citewall_evals.data import DATASETS\n"
    assert _eager_evals_imports(top, "citewall.cli.evaluate") == ["citewall.cli.evaluate:1"]
    inner = "def f():\n    import citewall_evals.harness\n"
    assert _eager_evals_imports(inner, "citewall.cli.evaluate") == []
    assert _eager_evals_imports(inner, "citewall.api.app") == ["citewall.api.app:2"]


def _wheel_packages(pyproject: Path) -> list[str]:
    """The packages setuptools puts in the wheel, by the ``[tool.setuptools.packages.find]``
    table of ``pyproject`` (found from its folder, as ``pip wheel`` does)."""
    find = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["setuptools"]
    table = find["packages"]["find"]
    return sorted(
        find_namespace_packages(
            where=str(pyproject.parent / table.get("where", ["."])[0]),
            include=table.get("include", ("*",)),
            exclude=table.get("exclude", ()),
        )
    )


def test_the_product_wheel_leaves_the_evals_package_out() -> None:
    packages = _wheel_packages(REPO / "pyproject.toml")
    assert "citewall" in packages
    assert "citewall.cli" in packages
    assert [p for p in packages if p != "citewall" and not p.startswith("citewall.")] == []
    assert [p for p in packages if "evals" in p.split(".")] == []
    # The evaluation package's own distribution holds it, and nothing of the product.
    evals = _wheel_packages(REPO / "evals" / "pyproject.toml")
    assert "citewall_evals" in evals
    assert all(p.split(".")[0] == "citewall_evals" for p in evals)


def test_the_wheel_check_sees_a_package_it_should_not_ship(tmp_path: Path) -> None:
    # Negative control: the pattern the product had (citewall*) also takes citewall_evals.
    for package in ("citewall", "citewall_evals"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").touch()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.setuptools.packages.find]\ninclude = ["citewall*"]\n', encoding="utf-8"
    )
    assert _wheel_packages(tmp_path / "pyproject.toml") == ["citewall", "citewall_evals"]
