"""The package layout holds: few top-level entries, no import cycle, no import from a layer above."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "subguard"

# Layers, lowest first. A package may import its own modules and any package of a lower rank; packages
# of the same rank are peers and import neither each other nor anything above.
RANK = {
    "core": 0,  # records, config, limits, group map, content cache, signing
    "rocketmq": 1,  # pure RocketMQ semantics
    "deploy": 2,  # how services run
    "simulate": 2,  # the broker/client model
    "extract": 3,  # code and config -> records
    "evidence": 3,  # logs and mqadmin output -> events
    "scan": 4,  # discovery, parallel extraction, memo
    "rules": 5,  # policies, engine, waivers, baseline, judge()
    "report": 5,  # one renderer per format
    "audit": 6,  # the Spark job
    "fix": 6,  # check --fix/--diff: edits per language; imports rules/report/extract/scan/core, the cli imports it
    "cli": 7,  # click commands and the console entry
}
NOT_PACKAGES = {"__init__.py", "__main__.py", "__pycache__", "py.typed"}


def _modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        yield ".".join(parts[:-1] if parts[-1] == "__init__" else parts), path


def _imports(module: str, path: Path) -> set[str]:
    """Every subguard module a module imports, at module level or inside a function."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "subguard")
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module}: relative import"
            if (node.module or "").split(".")[0] == "subguard":
                assert node.module is not None
                out.add(node.module)
                out.update(f"{node.module}.{a.name}" for a in node.names)
    known = {m for m, _ in _modules()}
    return {m for m in out if m in known and m != module and m != package}


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_top_level_entries() -> None:
    entries = sorted(p.name for p in PACKAGE.iterdir() if p.name not in NOT_PACKAGES)
    assert len(entries) <= 12, entries
    assert set(entries) == set(RANK), "every top-level package has a layer, and every layer a package"


def test_no_upward_or_sideways_import() -> None:
    wrong = []
    for module, path in _modules():
        here = _layer(module)
        for dep in _imports(module, path):
            there = _layer(dep)
            if not here or not there or here == there:
                continue  # the root package (version) is below everything; own package is free
            if here == "__main__" or RANK[there] < RANK[here]:
                continue
            wrong.append(f"{module} -> {dep}")
    assert not wrong, "imports from a layer at or above the importer:\n" + "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = {module: _imports(module, path) for module, path in _modules()}
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(" -> ".join([*trail[trail.index(dep) :], dep]) if dep in trail else f"{node} -> {dep}")
            elif dep not in state:
                visit(dep, [*trail, dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_fast_path_packages_stay_empty() -> None:
    """The console entry and the memo replay import these packages; their __init__ pulls nothing in."""
    for pkg in ("core", "scan", "cli"):
        tree = ast.parse((PACKAGE / pkg / "__init__.py").read_text(encoding="utf-8"))
        assert not [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))], pkg
