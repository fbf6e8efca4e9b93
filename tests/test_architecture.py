"""The import graph of the product: no cycle between modules, and every arrow the right way.

Every import counts: at the top of a module, inside a function, and under TYPE_CHECKING
(an import inside a function hides a cycle; it does not remove it). The allowed direction
between packages (docs/architecture.md):

    braid, chaos -> apps (designer, approvals, monitor, runs, tokens) -> web -> engine
        -> engine.core

An app may use `web` and `engine`; `web` may use `engine`; `engine.core` uses nothing of the
project but itself. Apps may use each other, but not in a circle.
"""

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("braid", "chaos", "web", "runs", "designer", "approvals", "monitor", "tokens", "engine")
APPS = frozenset({"designer", "approvals", "monitor", "runs", "tokens"})
# What each layer may import besides itself; an app may also import other apps.
ALLOWED: Mapping[str, frozenset[str]] = {
    "braid": frozenset({"web", "engine", "engine.core"} | APPS),
    "chaos": frozenset({"web", "engine", "engine.core"} | APPS),
    "app": frozenset({"web", "engine", "engine.core"} | APPS),
    "web": frozenset({"engine", "engine.core"}),
    "engine": frozenset({"engine.core"}),
    "engine.core": frozenset(),
}

Graph = Mapping[str, set[str]]


def module_name(path: Path) -> str:
    """Return the dotted name of a source file under ROOT (a package's __init__ is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def product_modules() -> dict[str, Path]:
    """Return every module of the product packages by dotted name (migrations included)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterable[str]:
    """Yield each dotted name an import statement anywhere in the tree may load."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(node, module, is_package)
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def resolve_relative(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """Return the absolute module a `from … import` statement names."""
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def import_graph() -> dict[str, set[str]]:
    """Return module -> the product modules it imports, read with ast from the sources."""
    modules = product_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        targets = set(imported_names(tree, name, is_package)) & modules.keys()
        graph[name] = {target for target in targets if not is_parent(target, name)}
    return graph


def is_parent(target: str, name: str) -> bool:
    """Whether target is the module itself or a package holding it: importing `a.b.c` runs
    the package `a.b` first, which is loading, not a dependency."""
    return target == name or name.startswith(target + ".")


def layer_of(module: str) -> str:
    """Return the layer a module belongs to: a package of PACKAGES, engine.core, or 'app'."""
    if module == "engine.core" or module.startswith("engine.core."):
        return "engine.core"
    top = module.split(".")[0]
    return "app" if top in APPS else top


def package_of(module: str) -> str:
    """Return the package a module is part of (engine.core counted apart from engine)."""
    return "engine.core" if layer_of(module) == "engine.core" else module.split(".")[0]


def cycles(graph: Graph) -> list[str]:
    """Return each strongly connected group of more than one node as a sentence: one cycle
    through it, and the other members when the group is larger than that cycle."""
    found = []
    for group in sorted(strongly_connected(graph), key=min):
        if len(group) < 2:
            continue
        cycle = cycle_through(graph, group)
        others = sorted(group - set(cycle))
        found.append(" -> ".join(cycle) + (f" (with {', '.join(others)})" if others else ""))
    return found


def strongly_connected(graph: Graph) -> list[set[str]]:
    """Return the strongly connected components of a graph (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    groups.append(pop_group(stack, on_stack, node))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return groups


def pop_group(stack: list[str], on_stack: set[str], root: str) -> set[str]:
    """Pop one component off Tarjan's stack, down to its root."""
    group: set[str] = set()
    while True:
        node = stack.pop()
        on_stack.discard(node)
        group.add(node)
        if node == root:
            return group


def cycle_through(graph: Graph, group: set[str]) -> list[str]:
    """Return one cycle inside a strongly connected group, starting at its first name."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in sorted(graph.get(node, set()) & group):
            if child == start:
                return [*paths[node], start]
            if child not in paths:
                paths[child] = [*paths[node], child]
                frontier.append(child)
    raise AssertionError(f"no cycle through {sorted(group)}")


def wrong_way_edges(graph: Graph) -> list[str]:
    """Return each import that crosses layers against the allowed direction."""
    wrong = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = package_of(module), package_of(target)
            if here != there and there not in ALLOWED[layer_of(module)]:
                wrong.append(f"{module} -> {target}")
    return wrong


def package_graph(graph: Graph, packages: Iterable[str]) -> dict[str, set[str]]:
    """Return the graph between the given packages that the module graph implies."""
    chosen = set(packages)
    between: dict[str, set[str]] = {package: set() for package in chosen}
    for module, targets in graph.items():
        for target in targets:
            here, there = package_of(module), package_of(target)
            if here in chosen and there in chosen and here != there:
                between[here].add(there)
    return between


def problems(graph: Graph) -> list[str]:
    """Return every cycle and every wrong-way import of a module graph, as sentences."""
    found = [f"import cycle: {cycle}" for cycle in cycles(graph)]
    found += [f"wrong way: {edge}" for edge in wrong_way_edges(graph)]
    app_cycles = cycles(package_graph(graph, APPS))
    found += [f"apps in a circle: {cycle}" for cycle in app_cycles]
    return found


def test_the_product_has_no_import_cycle_and_no_wrong_way_import() -> None:
    graph = import_graph()
    assert "engine.core.scheduler" in graph and "runs.api" in graph
    found = problems(graph)
    assert not found, "\n" + "\n".join(found)


def test_a_made_up_graph_with_a_cycle_and_wrong_way_imports_is_reported() -> None:
    graph = {
        "engine.durable": {"approvals.services"},
        "approvals.services": {"engine.durable", "designer.models"},
        "designer.models": {"approvals.models"},
        "approvals.models": set(),
        "engine.core.state": {"engine.models"},
        "engine.models": {"web.auth"},
        "web.auth": {"braid.settings"},
        "braid.settings": set(),
    }
    assert problems(graph) == [
        "import cycle: approvals.services -> engine.durable -> approvals.services",
        "wrong way: engine.core.state -> engine.models",
        "wrong way: engine.durable -> approvals.services",
        "wrong way: engine.models -> web.auth",
        "wrong way: web.auth -> braid.settings",
        "apps in a circle: approvals -> designer -> approvals",
    ]


def test_imports_inside_functions_and_under_type_checking_are_counted() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from engine.models import Run\n"
        "def later():\n    from . import services\n    import approvals.models\n"
    )
    names = set(imported_names(ast.parse(source), "runs.api", is_package=False))
    assert {"engine.models", "runs.services", "approvals.models"} <= names


# ------------------------------------------------------------------ sizes

MODULE_MAX_LINES = 700
FUNCTION_MAX_LINES = 60


def oversized(name: str, source: str) -> list[str]:
    """Return what in one module is over the house's sizes: the module past 700 lines, and
    each function or method past 60 (decorators and docstring included)."""
    found = []
    lines = source.count("\n")
    if lines > MODULE_MAX_LINES:
        found.append(f"{name}: {lines} lines")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > FUNCTION_MAX_LINES:
                found.append(f"{name}.{node.name} (line {node.lineno}): {length} lines")
    return found


def test_no_product_module_is_over_700_lines_and_no_function_over_60() -> None:
    found = [
        problem
        for name, path in product_modules().items()
        if ".migrations." not in f".{name}."
        for problem in oversized(name, path.read_text())
    ]
    assert not found, "\n" + "\n".join(found)


def test_the_size_check_names_a_long_module_and_a_long_function() -> None:
    body = "\n".join(f"    x{n} = {n}" for n in range(61))
    source = f"@decorated\ndef long():\n{body}\n" + "\n" * 700
    assert oversized("made.up", source) == [
        "made.up: 763 lines",
        "made.up.long (line 2): 63 lines",
    ]
