"""The code's layout: dependencies run one way between the domains, and no modules import each
other, at the top or inside a function.

    curation  <-  annotation, authoring  <-  judging  <-  releases  <-  config

A domain may import those to its left, never those to its right; annotation and task authoring
stand side by side and import neither each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"curation": 0, "annotation": 1, "authoring": 1, "judging": 2, "releases": 3}
DOMAINS = tuple(LAYERS)


def _modules() -> dict[str, Path]:
    modules = {}
    for domain in DOMAINS:
        for path in (ROOT / domain).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _imports(path: Path) -> set[str]:
    """The project modules `path` imports, wherever in the file the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from package import module` imports the module; `from module import name`, the
            # module alone.
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        found.update(name for name in names if name in MODULES)
    return found


GRAPH = {module: _imports(path) for module, path in MODULES.items()}


def _domain(module: str) -> str:
    return module.split(".")[0]


def test_no_domain_imports_one_built_on_it() -> None:
    backwards = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if _domain(target) != _domain(module) and LAYERS[_domain(target)] >= LAYERS[_domain(module)]
    )
    assert backwards == []


def test_no_modules_import_each_other() -> None:
    cycles: list[list[str]] = []
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = "open"
        path.append(module)
        for target in sorted(GRAPH[module]):
            # A package's __init__ is run by importing any module in it: that is no cycle.
            if module.startswith(f"{target}."):
                continue
            if state.get(target) == "open":
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module)
    assert [" -> ".join(cycle) for cycle in cycles] == []


def test_no_module_is_much_over_500_lines() -> None:
    lengths = {module: len(path.read_text().splitlines()) for module, path in MODULES.items()}
    assert {module: length for module, length in lengths.items() if length > 520} == {}
