"""The layout shows the design: the build tools and the library import in one direction.

* ``tools/``: the build package ``tools/bookbuild/`` and the scripts beside it import each other
  without a cycle, the package never imports its command-line scripts, and no module is over
  :data:`MAX_LINES` lines (issue 21: ``build_book.py`` and ``build_student.py`` imported each
  other, and ``build_student.py`` held three jobs in 819 lines).
* ``dpadmm_lite/``: with every module counted as the top-level part it belongs to (a subpackage
  such as ``viz`` or a module such as ``_book``), the parts import each other without a cycle;
  above all ``viz`` never imports ``_book``, the notebook glue that sits on top of it.

The imports are read from the source (every ``import`` statement, also inside functions), not by
importing the modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
LIBRARY = ROOT / "dpadmm_lite"
#: The longest a module of the build tools may be.
MAX_LINES = 400


def _module_name(base: Path, path: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(base: Path, files) -> dict[str, set[str]]:
    """Module name (dotted, relative to ``base``) -> the modules among ``files`` it imports (with the
    packages they are in)."""
    paths = {_module_name(base, p): p for p in files}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                module = node.module or ""
                if node.level:
                    parts = package.split(".")
                    module = ".".join(parts[:len(parts) - node.level + 1] + ([module] if module else []))
                # `from package import module` imports the module; `from module import name`, the module
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in paths else module for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if not target or target == name:
                    continue
                found.add(target)
                # importing a.b.c runs a/b/__init__.py too, unless the importer is a.b or inside it
                parent = target.rpartition(".")[0]
                while parent and parent != name and not name.startswith(parent + "."):
                    found.add(parent)
                    parent = parent.rpartition(".")[0]
        graph[name] = found
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` as ``[a, b, …, a]``, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node):
        state[node] = 1
        path.append(node)
        for succ in sorted(graph.get(node, ())):
            if state.get(succ) == 1:
                return path[path.index(succ):] + [succ]
            if succ not in state:
                cycle = visit(succ)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for succ in graph.get(todo.pop(), ()):
            if succ not in seen:
                seen.add(succ)
                todo.append(succ)
    return seen


def by_part(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph of the top-level parts of a package: ``dpadmm_lite.viz._theme`` counts as ``dpadmm_lite.viz``."""
    def part(name):
        return ".".join(name.split(".")[:2])

    parts: dict[str, set[str]] = {}
    for name, targets in graph.items():
        parts.setdefault(part(name), set()).update(part(t) for t in targets if part(t) != part(name))
    return parts


# ====================================================================== the build tools
def tools_graph(tools: Path = TOOLS) -> dict[str, set[str]]:
    return import_graph(tools, sorted(tools.rglob("*.py")))


def test_build_tools_import_in_one_direction():
    graph = tools_graph()
    # the reader sees the arrows there are (a parser that found none would pass everything)
    assert {"bookbuild.book"} <= graph["build_book"] and {"bookbuild.student"} <= graph["build_student"]
    assert {"bookbuild.solutions", "bookbuild.book", "lab"} <= graph["bookbuild.student"]
    assert "bookbuild.instructor" in graph["bookbuild.stage"]
    cycle = find_cycle(graph)
    assert cycle is None, "tools/ imports in a circle: " + " -> ".join(cycle)
    for name, targets in graph.items():
        if name.startswith("bookbuild"):
            scripts = {t for t in targets if t in ("build_book", "build_student")}
            assert not scripts, f"{name} imports the command-line script {scripts}: import from bookbuild instead"


def test_no_build_tool_module_is_over_400_lines():
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text().splitlines()) for p in sorted(TOOLS.rglob("*.py"))}
    assert "tools/bookbuild/student.py" in sizes
    too_long = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert not too_long, f"modules over {MAX_LINES} lines (split them by what they do): {too_long}"


# ====================================================================== the library
def library_graph(library: Path = LIBRARY) -> dict[str, set[str]]:
    return import_graph(library.parent, sorted(library.rglob("*.py")))


def test_viz_never_imports_the_notebook_glue():
    graph = library_graph()
    viz = [name for name in graph if name == "dpadmm_lite.viz" or name.startswith("dpadmm_lite.viz.")]
    assert "dpadmm_lite.viz._theme" in viz and "dpadmm_lite._outputs" in graph["dpadmm_lite.viz._theme"]
    assert "dpadmm_lite.viz" in reachable(graph, "dpadmm_lite._book"), "_book uses viz: the arrow runs down"
    for name in viz:
        assert "dpadmm_lite._book" not in reachable(graph, name), (
            f"{name} imports dpadmm_lite._book (directly or through another module): the arrow runs back up; "
            "move what viz needs below it (dpadmm_lite/_outputs.py or viz itself)")


def test_the_library_parts_import_in_one_direction():
    parts = by_part(library_graph())
    assert {"dpadmm_lite.viz", "dpadmm_lite._book", "dpadmm_lite.algorithms", "dpadmm_lite.accounting"} <= set(parts)
    assert "dpadmm_lite.accounting" in parts["dpadmm_lite.algorithms"]
    cycle = find_cycle(parts)
    assert cycle is None, "the library imports in a circle: " + " -> ".join(cycle)
