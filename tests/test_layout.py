"""The code's layout: dependencies run one way between the domains, for imports, for the models
one model names and for migrations alike, and no modules import each other.

    stats  <-  curation  <-  annotation, authoring  <-  judging  <-  review  <-  reports
           <-  alignment, hub, releases

A domain may depend on those to its left, never on those to its right nor on one beside it
(annotation and authoring, or alignment, hub and releases, know nothing of each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    # Numeric kernels: plain functions on arrays, no Django.
    "stats": 0,
    # The platform (accounts, projects, members, access, audit, jobs) and the records.
    "curation": 1,
    "annotation": 2,
    "authoring": 2,
    "judging": 3,
    "review": 4,
    "reports": 5,
    "alignment": 6,
    "hub": 6,
    "releases": 6,
}
DOMAINS = tuple(LAYERS)
# Migrations written before this rule, which databases have applied and which therefore stay
# as they are: curation's move of annotation and authoring out of it (its state had to point at
# their models), and those made while a record named its SafePro task (`Record.task`, now
# `authoring.RecordTask`), into which makemigrations wrote a dependency on authoring.
HISTORICAL_MIGRATIONS = {
    ("curation", "0006_annotation_and_authoring_apart"),
    ("curation", "0013_record_source"),
    ("curation", "0016_record_label_counts"),
    ("curation", "0016_record_sources_index"),
    ("curation", "0018_record_filters_by_category_with_label_counts"),
}


def _files(domain: str, *, migrations: bool) -> list[Path]:
    return [
        path for path in (ROOT / domain).rglob("*.py") if ("migrations" in path.parts) == migrations
    ]


def _modules() -> dict[str, Path]:
    modules = {}
    for domain in DOMAINS:
        for path in _files(domain, migrations=False):
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


def _may_depend(domain: str, on: str) -> bool:
    return domain == on or LAYERS[on] < LAYERS[domain]


def test_no_domain_imports_one_built_on_it_or_beside_it() -> None:
    backwards = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        for target in targets
        if not _may_depend(_domain(module), _domain(target))
    )
    assert backwards == []


def _model_references(path: Path) -> list[str]:
    """The "app.Model" strings a module's fields name (ForeignKey("curation.Record"), ...)."""
    references = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        arguments = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "to")]
        references.extend(
            argument.value
            for argument in arguments
            if isinstance(argument, ast.Constant)
            and isinstance(argument.value, str)
            and argument.value.count(".") == 1
            and argument.value.split(".")[0] in LAYERS
            and argument.value.split(".")[1][:1].isupper()
        )
    return references


def test_no_model_names_a_model_of_a_domain_built_on_it() -> None:
    upward = sorted(
        f"{path.relative_to(ROOT)} names {reference}"
        for domain in DOMAINS
        for path in _files(domain, migrations=False)
        for reference in _model_references(path)
        if not _may_depend(domain, reference.split(".")[0])
    )
    assert upward == []


def _migration_dependencies(path: Path) -> list[str]:
    """The apps a migration depends on, from its `dependencies` list."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "dependencies" for target in node.targets
        ):
            return [
                element.elts[0].value
                for element in getattr(node.value, "elts", [])
                if isinstance(element, ast.Tuple) and isinstance(element.elts[0], ast.Constant)
            ]
    return []


def test_no_migration_depends_on_a_domain_built_on_it() -> None:
    upward = sorted(
        f"{domain} {path.stem} depends on {app}"
        for domain in DOMAINS
        for path in _files(domain, migrations=True)
        if (domain, path.stem) not in HISTORICAL_MIGRATIONS
        for app in _migration_dependencies(path)
        if app in LAYERS and not _may_depend(domain, app)
    )
    assert upward == []


def test_the_checks_see_each_kind_of_dependency() -> None:
    """The three checks above read what they should: they would find an upward dependency."""
    assert "curation.models" in GRAPH["hub.record_list"]
    assert "curation.Record" in _model_references(ROOT / "review/models.py")
    assert "judging" in _migration_dependencies(ROOT / "review/migrations/0001_initial.py")


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
