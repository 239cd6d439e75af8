"""The package's layers and import graph, read from the source (every import, also those inside functions).

Layers, lowest first; a layer may import itself and what its row names:

    errors, _atomic                  nothing
    settings, ops                    errors
    structures + export              _atomic, errors (one layer: Document's export verbs call the exporters)
    io                               errors, settings, structures
    models                           ops, errors (nn.Modules, configs, builders, weights records; no I/O)
    fast                             models, ops, errors, settings, _atomic (post-build transforms)
    predictors                       models, fast, ops, io, structures, errors, settings, _atomic (run models)
    pipelines                        predictors, io, structures, export, ops, errors, settings, _atomic
    evaluation                       pipelines, predictors, io, structures, ops, errors
    training                         evaluation, predictors, models, fast, io, structures, ops, errors, _atomic
    app                              any layer but training (interfaces)
    integrations                     pipelines, predictors, io, structures, export, errors, settings
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "vision"
BASE = {"errors", "_atomic"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "_atomic": set(),
    "settings": {"errors"},
    "ops": {"errors"},
    "structures": {"export", "_atomic", "errors"},
    "export": {"structures", "_atomic", "errors"},
    "io": {"errors", "settings", "structures"},
    "models": {"ops", "errors"},
    "fast": {"models", "ops", "errors", "settings", "_atomic"},
    "predictors": {"models", "fast", "ops", "io", "structures", "errors", "settings", "_atomic"},
    "pipelines": {"predictors", "io", "structures", "export", "ops", "errors", "settings", "_atomic"},
    "evaluation": {"pipelines", "predictors", "io", "structures", "ops", "errors"},
    "training": {"evaluation", "predictors", "models", "fast", "io", "structures", "ops", "errors", "_atomic"},
    "app": {"pipelines", "predictors", "models", "fast", "io", "structures", "export", "ops", "errors",
            "settings", "_atomic", "evaluation"},
    "assets": set(),
    # plugins for other tools (the OCRmyPDF engine): interfaces like app, named by the tool's own convention
    "integrations": {"pipelines", "predictors", "io", "structures", "export", "errors", "settings"},
}


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = ROOT.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports(tree: ast.AST, *, top_level_only: bool) -> set[str]:
    """``vision.*`` modules imported by ``tree``: everywhere, or only by statements run at import time
    (not inside functions, nor under ``if TYPE_CHECKING:``)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if top_level_only and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if top_level_only and isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name.startswith("vision."))
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and (child.module or "").startswith("vision"):
                base = child.module or ""
                for alias in child.names:  # ``from vision.x import y`` may import the module vision.x.y
                    found.add(f"{base}.{alias.name}" if _is_module(f"{base}.{alias.name}") else base)
            visit(child)

    visit(tree)
    return found


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in sorted(ROOT.rglob("*.py")):
        graph[_module(path)] |= _imports(ast.parse(path.read_text(encoding="utf-8")), top_level_only=top_level_only)
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "vision"


def test_every_package_imports_only_the_layers_below_it() -> None:
    bad = []
    for module, targets in _graph(top_level_only=False).items():
        src = _layer(module)
        if src == "vision":  # the package root: the version, and the public API re-exported lazily by name
            continue
        assert src in ALLOWED, f"{module}: a new top-level package needs its row in ALLOWED"
        bad += [f"{module} -> {t}" for t in sorted(targets) if _layer(t) not in ALLOWED[src] | {src, "vision"}]
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_layers_form_no_cycle() -> None:
    seen: dict[str, int] = {}

    def depth(layer: str, path: tuple[str, ...]) -> int:
        assert layer not in path or {"structures", "export"} >= set(path[path.index(layer):]), path
        if layer in path:
            return 0
        if layer not in seen:
            seen[layer] = 1 + max((depth(d, (*path, layer)) for d in ALLOWED[layer]), default=0)
        return seen[layer]

    for layer in ALLOWED:
        depth(layer, ())


def test_no_import_cycles_between_modules() -> None:
    """Import-time imports (module level) of vision/ form a DAG: no module needs itself to be imported."""
    graph = _graph(top_level_only=True)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt in graph and state.get(nxt) is None:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None:
            visit(node)


@pytest.mark.parametrize("limit", [400])
def test_every_module_is_under_the_line_limit(limit: int) -> None:
    long = [f"{p.relative_to(ROOT.parent)}: {n}" for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= limit]
    assert not long, f"modules of {limit} lines or more:\n" + "\n".join(long)
