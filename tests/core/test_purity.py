"""engine/core is pure: no framework, so the engine runs and tests without Django."""

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "engine" / "core"
FRAMEWORKS = ("django", "celery", "channels", "rest_framework", "kombu", "daphne")


def imported_roots(path: Path) -> set[str]:
    """Return the top-level package names a module imports."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_names_a_framework_in_an_import() -> None:
    offenders = {
        str(path.relative_to(CORE)): sorted(imported_roots(path) & set(FRAMEWORKS))
        for path in CORE.rglob("*.py")
    }
    assert {name: roots for name, roots in offenders.items() if roots} == {}


def module_name(path: Path) -> str:
    """Return the dotted module name of a file under engine/core."""
    parts = path.relative_to(CORE.parents[1]).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_importing_every_core_module_loads_no_framework() -> None:
    modules = sorted(module_name(path) for path in CORE.rglob("*.py"))
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS!r}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=CORE.parents[1],
    )
    assert result.stdout.strip() == "[]"


def imports_inside_functions(path: Path) -> list[int]:
    """Return the lines of the imports a module makes inside a function or class body."""
    tree = ast.parse(path.read_text(), str(path))
    top_level = {id(node) for node in tree.body}
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in top_level
    ]


def test_no_core_module_imports_inside_a_function() -> None:
    # A deferred import hides a cycle from whoever reads the top of the module.
    found = {
        str(path.relative_to(CORE)): imports_inside_functions(path)
        for path in sorted(CORE.rglob("*.py"))
    }
    assert {name: lines for name, lines in found.items() if lines} == {}
