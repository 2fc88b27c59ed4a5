"""The layout shows the design: the build tools and the library import in one direction.

* ``tools/``: the build package ``tools/bookbuild/`` and the scripts beside it import each other
  without a cycle, the package never imports its command-line scripts, and no module is over
  :data:`MAX_LINES` lines (issue 21: ``build_book.py`` and ``build_student.py`` imported each
  other, and ``build_student.py`` held three jobs in 819 lines).
* ``dpadmm_lite/``: with every module counted as the top-level part it belongs to (a subpackage
  such as ``viz`` or a module such as ``_book``), the parts import each other without a cycle;
  above all ``viz`` never imports ``_book``, the notebook glue that sits on top of it.
* ``tests/``: every test file is in exactly one lane of ``tests/lanes.py``, and the library's lane neither
  requests the fixtures that build the book or start a browser nor imports the book's toolchain, so that
  ``make test-lib`` stays the short lane it promises.

The imports are read from the source (every ``import`` statement, also inside functions), not by
importing the modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import lanes

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"
LIBRARY = ROOT / "dpadmm_lite"
#: The book's instruments: sweeps, claims, charts, widgets, live panels, exercises, the Sphinx plugins.
APPARATUS = ROOT / "dpadmm_book"
TESTS = ROOT / "tests"
#: What the library's lane may not import: the book's build (papermill, Jupyter Book), JupyterLab, Lite, the browser.
BOOK_TOOLCHAIN = ("build_book", "build_student", "bookbuild", "lab", "lab_session", "lite_session", "assignments",
                  "browser_visit", "build_notebooks", "playwright", "papermill", "nbclient", "jupyter_book")
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
    """The graph of the top-level parts of a package: ``dpadmm_book.viz._theme`` counts as ``dpadmm_book.viz``."""
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


# ====================================================================== the library and the book's package
def library_graph(packages: tuple[Path, ...] = (LIBRARY, APPARATUS)) -> dict[str, set[str]]:
    return import_graph(ROOT, sorted(p for package in packages for p in package.rglob("*.py")))


def test_the_library_never_imports_the_book():
    """``dpadmm_lite`` is the science a practitioner installs alone: no module of it imports ``dpadmm_book``
    (directly or through another), not even inside a function."""
    graph = library_graph()
    library = sorted(name for name in graph if name.partition(".")[0] == "dpadmm_lite")
    assert "dpadmm_lite.algorithms.huang2019" in library and "dpadmm_book.sweep" in graph
    assert "dpadmm_lite" in reachable(graph, "dpadmm_book.sweep"), "the book's package uses the library"
    for name in library:
        crossing = sorted(t for t in reachable(graph, name) if t.partition(".")[0] == "dpadmm_book")
        assert not crossing, f"{name} imports the book's package {crossing}: the arrow runs from the book to the library"


def test_viz_never_imports_the_notebook_glue():
    graph = library_graph()
    viz = [name for name in graph if name == "dpadmm_book.viz" or name.startswith("dpadmm_book.viz.")]
    assert "dpadmm_book.viz._theme" in viz and "dpadmm_book._outputs" in graph["dpadmm_book.viz._theme"]
    assert "dpadmm_book.viz" in reachable(graph, "dpadmm_book._book"), "_book uses viz: the arrow runs down"
    for name in viz:
        assert "dpadmm_book._book" not in reachable(graph, name), (
            f"{name} imports dpadmm_book._book (directly or through another module): the arrow runs back up; "
            "move what viz needs below it (dpadmm_book/_outputs.py or viz itself)")


def test_the_library_parts_import_in_one_direction():
    parts = by_part(library_graph())
    assert {"dpadmm_book.viz", "dpadmm_book._book", "dpadmm_lite.algorithms", "dpadmm_lite.accounting"} <= set(parts)
    assert "dpadmm_lite.accounting" in parts["dpadmm_lite.algorithms"]
    cycle = find_cycle(parts)
    assert cycle is None, "the library imports in a circle: " + " -> ".join(cycle)


# ====================================================================== the tests' lanes
def _test_files() -> list[str]:
    """The files pytest collects under tests/ (its default patterns), as paths relative to tests/."""
    found = {p for pattern in ("test_*.py", "*_test.py") for p in TESTS.rglob(pattern)}
    return sorted(p.relative_to(TESTS).as_posix() for p in found if "node_modules" not in p.parts)


def test_every_test_file_is_in_exactly_one_lane():
    assert set(lanes.LANES) == {"lib", "contracts", "book"}
    files = _test_files()
    assert "test_layout.py" in files and "test_site.py" in files
    lane_of: dict[str, list[str]] = {}
    for lane, names in lanes.LANES.items():
        assert len(names) == len(set(names)), f"lane {lane} names a file twice in tests/lanes.py"
        for name in names:
            lane_of.setdefault(name, []).append(lane)
    nowhere = [f for f in files if f not in lane_of]
    assert not nowhere, f"test files in no lane (add each to one lane of tests/lanes.py): {nowhere}"
    twice = {f: where for f, where in lane_of.items() if len(where) > 1}
    assert not twice, f"test files in more than one lane of tests/lanes.py: {twice}"
    stale = sorted(set(lane_of) - set(files))
    assert not stale, f"tests/lanes.py names files that are not tests of tests/: {stale}"


def _fixtures_and_imports(path: Path) -> tuple[set[str], set[str]]:
    """The fixtures a test module requests by name (arguments of its functions, ``getfixturevalue`` and
    ``usefixtures`` strings) and the top-level modules it imports."""
    return _fixtures_and_imports_of(ast.parse(path.read_text(), filename=str(path)))


def _fixtures_and_imports_of(tree: ast.AST) -> tuple[set[str], set[str]]:
    fixtures, imports = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            fixtures.update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs)
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in ("getfixturevalue", "usefixtures"):
                fixtures.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
        elif isinstance(node, ast.Import):
            imports.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imports.add(node.module.split(".")[0])
    return fixtures, imports


def _book_fixtures() -> set[str]:
    """:data:`lanes.BOOK_FIXTURES` and every fixture of conftest.py that requests one of them, directly or not."""
    conftest = ast.parse((TESTS / "conftest.py").read_text())
    requests = {}
    for f in conftest.body:
        if isinstance(f, ast.FunctionDef) and any("fixture" in ast.unparse(d) for d in f.decorator_list):
            requests[f.name] = _fixtures_and_imports_of(f)[0]
    assert set(lanes.BOOK_FIXTURES) <= set(requests), "tests/lanes.py names a book fixture conftest.py does not define"
    assert "fast_build" in requests["site_dir"] and "site_dir" in requests["server"]
    book = set(lanes.BOOK_FIXTURES)
    while True:
        more = {name for name, wants in requests.items() if wants & book} - book
        if not more:
            return book
        book |= more


def test_the_library_lane_builds_no_book_and_starts_no_browser():
    book = _book_fixtures()
    # the reader sees the check find what is there: the site's tests open the browser on the served site
    assert {"browser", "server"} <= _fixtures_and_imports(TESTS / "test_site.py")[0]
    assert "build_book" in _fixtures_and_imports(TESTS / "test_pipeline.py")[1]
    for name in lanes.LANES["lib"]:
        fixtures, imports = _fixtures_and_imports(TESTS / name)
        book_fixtures = fixtures & book
        assert not book_fixtures, (f"tests/{name} is in the library's lane but requests {sorted(book_fixtures)}: "
                                   "move it to the book's lane in tests/lanes.py")
        toolchain = imports & set(BOOK_TOOLCHAIN)
        assert not toolchain, (f"tests/{name} is in the library's lane but imports the book's toolchain "
                               f"{sorted(toolchain)}: move it to the book's lane in tests/lanes.py")


def test_no_name_of_the_library_hides_a_subpackage():
    """``dl.algorithms`` is the subpackage of the algorithms (the names are ``dl.algorithm_names()``): no
    attribute of the package shadows one of its subpackages or modules."""
    import importlib
    import pkgutil
    import types

    import dpadmm_lite as dl

    assert isinstance(dl.algorithms, types.ModuleType) and dl.algorithms.__name__ == "dpadmm_lite.algorithms"
    assert "dp_admm" in dl.algorithm_names()
    for info in pkgutil.iter_modules(dl.__path__):
        module = importlib.import_module(f"dpadmm_lite.{info.name}")
        assert getattr(dl, info.name) is module, f"dpadmm_lite.{info.name} is hidden by another object"
