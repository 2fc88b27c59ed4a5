"""The classroom edition (issue 14): exercises and checks that teach, the student build, the instructor page.

* Every chapter of ``_toc.yml`` has ≥ 3 exercises, ≥ 2 of them with a check from
  ``dpadmm_book.exercises``, and every check function has an entry in ``tests/exercise_answers.py``.
* Every check accepts its reference answer, rejects ≥ 2 typical wrong answers with a message that
  names the mistake and gives a hint, says "not answered yet" to ``...``, and never shows a line of
  the solution's code.
* The student site and its notebooks contain no solution text (checked with each solution's own
  words) while the main build does; the student site has the same pages except the instructor page.

The student build reuses the test session's fast build (``fast_build``): only Jupyter Book runs again.
"""

from __future__ import annotations

import html.parser
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest

import build_book
import build_student
import exercise_answers
from dpadmm_book import exercises
from dpadmm_book.exercises import Feedback

ROOT = build_book.ROOT
BOOK = build_student.read_book()
CHAPTERS = [ch for ch in BOOK if ch.is_chapter]
ANSWERS = exercise_answers.ANSWERS


def _all_check_functions() -> list[str]:
    names = []
    for info in pkgutil.iter_modules(exercises.__path__):
        module = importlib.import_module(f"dpadmm_book.exercises.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("check_") and inspect.isfunction(value) and value.__module__ == module.__name__:
                names.append(f"{info.name}.{name}")
    return sorted(names)


CHECKS = _all_check_functions()


# ---------------------------------------------------------------------------- removing solutions
def test_strip_markdown_removes_every_solution_form_and_keeps_the_exercises():
    text = "\n".join([
        "```{exercise}", ":label: t_ex_1", "", "Compute it.", "```", "",
        "````{solution} t_ex_1", ":class: dropdown", "", "The secret derivation.", "",
        "```python", "answer = secret_code()", "```", "````", "",
        ":::{admonition} Note", "", "::::{solution} t_ex_2", "colon-fenced secret", "::::", "", "kept note", ":::", "",
        "````markdown", "```{solution} not_a_solution", "shown as code", "```", "````", "",
        "```{solution-start} t_ex_3", "```", "gated secret", "```{solution-end}", "```", "after",
    ])
    kept, removed = build_student.strip_markdown(text)
    assert "Compute it." in kept and ":label: t_ex_1" in kept and "kept note" in kept and "after" in kept
    for secret in ("secret derivation", "secret_code", "colon-fenced secret", "gated secret"):
        assert secret not in kept
    assert "shown as code" in kept, "a solution shown inside a code block is text, not a directive"
    assert [s.target for s in removed] == ["t_ex_1", "t_ex_2", "t_ex_3"]
    assert "secret_code()" in removed[0].text


def _nb(*cells):
    out = []
    for kind, source, *rest in cells:
        cell = {"cell_type": kind, "metadata": {"tags": rest[0] if rest else []}, "source": source}
        if kind == "code":
            cell["outputs"] = rest[1] if len(rest) > 1 else []
        out.append(cell)
    return {"cells": out, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _glued(name, value):
    return {"output_type": "display_data", "data": {"application/papermill.record/text/plain": repr(value)},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}}}


def test_strip_notebook_drops_solution_cells_and_the_numbers_only_solutions_quote():
    nb = _nb(
        ("code", "x = 1\nglue('public', x, display=False)\nglue('both', 2, display=False)", ["remove-cell"],
         [_glued("public", 1), _glued("both", 2)]),
        ("code", "# numbers quoted in the solutions\nglue('secret', 42, display=False)", ["remove-cell"],
         [_glued("secret", 42)]),
        ("code", "helper = 7\nglue('secret2', helper, display=False)", ["remove-cell"], [_glued("secret2", 7)]),
        ("markdown", "Prose quotes {glue:text}`public` and {glue:text}`both:.1f`.\n\n"
                     "```{exercise}\n:label: a\n\nDo.\n```\n\n````{solution} a\n"
                     "It is {glue:text}`secret` and {glue:text}`both` and {glue:text}`secret2`.\n````"),
        ("code", "answer = helper + 1", []),
        ("code", "answer = 42  # the solution as a tagged cell", ["solution"]),
        ("markdown", "```{solution-start} a\n```\nGated text."),
        ("code", "gated_code = 1", []),
        ("markdown", "```{solution-end}\n```\nAfter the gate."),
    )
    student, removed = build_student.strip_notebook(nb, "t")
    text = json.dumps(student)
    assert "'secret'" not in text and "42" not in text, "the cell that only glues a solution's number is dropped"
    assert "helper = 7" in text, "a hidden cell whose names a later cell uses stays (its glue output goes)"
    assert '"secret2"' not in text
    assert '"public"' in text and '"both"' in text
    assert "Gated text" not in text and "gated_code" not in text and "After the gate." in text
    assert "Do." in text and "It is" not in text
    assert len(removed) == 3 and nb["cells"][3]["source"].count("solution") == 1, "the input is not modified"


# ---------------------------------------------------------------------------- chapters, exercises, checks
def test_every_chapter_has_objectives_three_exercises_and_two_checks():
    assert CHAPTERS, "no chapter found in _toc.yml"
    assert not build_student.problems(BOOK), "\n".join(build_student.problems(BOOK))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda ch: ch.doc)
def test_checks_named_by_a_chapter_exist_and_are_in_the_answer_table(chapter):
    for exercise in chapter.checked:
        for name in exercise.checks:
            assert callable(build_student.check_function(name)), f"{exercise.label}: {name} does not exist"
            assert name in ANSWERS, f"{exercise.label}: add {name!r} to tests/exercise_answers.py"


def test_every_check_function_has_an_answer_entry():
    assert CHECKS, "no check functions found in dpadmm_book/exercises"
    missing = [name for name in CHECKS if name not in ANSWERS]
    assert not missing, f"add these checks to tests/exercise_answers.py (see its docstring): {missing}"
    stale = sorted(set(ANSWERS) - set(CHECKS))
    assert not stale, f"tests/exercise_answers.py has entries for checks that no longer exist: {stale}"


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_check_accepts_the_reference_answer(name):
    entry = ANSWERS[name]
    feedback = entry.run(build_student.check_function(name), entry.reference())
    assert isinstance(feedback, Feedback), f"{name} must return a Feedback, got {type(feedback).__name__}"
    assert feedback, f"{name} rejects the reference answer: {feedback.message}"
    assert feedback.message.startswith("✓") and "correct — " in feedback.message
    shown = feedback.message.split("correct — ", 1)[1]
    assert len(shown) > 40 and shown != "well done.", f"{name}: say what the student has shown, not only ✓"


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_check_names_each_typical_mistake_and_gives_a_hint(name):
    entry = ANSWERS[name]
    assert len(entry.wrong) >= 2, f"{name}: the answer table needs at least two typical wrong answers"
    check = build_student.check_function(name)
    for words, make in entry.wrong.items():
        feedback = entry.run(check, make())
        assert isinstance(feedback, Feedback) and not feedback, f"{name} accepts the wrong answer {words!r}"
        assert feedback.message.startswith("✗"), feedback.message
        assert words in feedback.message, (f"{name} does not name the mistake {words!r} (a generic answer is not "
                                           f"teaching); it says: {feedback.message}")
        assert "Hint: " in feedback.message, f"{name}: a wrong answer gets a hint: {feedback.message}"


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_check_says_not_answered_to_the_placeholder(name):
    entry = ANSWERS[name]
    feedback = entry.run(build_student.check_function(name), ...)
    assert isinstance(feedback, Feedback) and not feedback and "not answered yet" in feedback.message


def _code_lines(solution: str) -> list[str]:
    lines = []
    for _, code in re.findall(r"^(`{3,})[^\n]*\n(.*?)^\1\s*$", solution, flags=re.S | re.M):
        for line in code.splitlines():
            line = " ".join(line.split("#")[0].split())
            if len(line) >= 12:
                lines.append(line)
    return lines


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda ch: ch.doc)
def test_checks_never_show_the_solution_code(chapter):
    for exercise in chapter.checked:
        code = _code_lines(exercise.solution)
        for name in exercise.checks:
            entry = ANSWERS[name]
            check = build_student.check_function(name)
            answers = [entry.reference(), ...] + [make() for make in entry.wrong.values()]
            for answer in answers:
                message = " ".join(entry.run(check, answer).message.split())
                leaked = [line for line in code if line in message]
                assert not leaked, f"{name} shows the solution's code {leaked} in: {message}"


# ---------------------------------------------------------------------------- instructor page
def test_instructor_page_is_in_the_toc_before_the_bibliography_and_includes_the_generated_part():
    docs = build_book.toc_files()
    assert docs.index(build_student.INSTRUCTOR_DOC) == docs.index("book/bibliography") - 1
    page = (ROOT / f"{build_student.INSTRUCTOR_DOC}.md").read_text()
    assert f"{{include}} {Path(build_student.INSTRUCTOR_PART).name}" in page
    assert "JupyterHub" in page and "make student" in page


def test_instructor_notes_cover_every_chapter_of_the_toc():
    notes = build_student.instructor_notes()
    for chapter in CHAPTERS:
        assert f"### {chapter.title}" in notes, f"{chapter.doc} is missing from the instructor notes"
        section = notes.split(f"### {chapter.title}", 1)[1].split("\n### ", 1)[0]
        assert "**Learning objectives.**" in section and "**Prerequisites.**" in section and "**Time.**" in section
        for exercise in chapter.exercises:
            assert f"{{ref}}`{exercise.label}`" in section
        for exercise in chapter.checked:
            assert "lab session" in section
            mistakes = section.split("**Mistakes the checks recognise**", 1)
            assert len(mistakes) == 2 and f"{{ref}}`{exercise.label}`" in mistakes[1], (
                f"{exercise.label}: no recognised mistakes listed")
    for doc in set(build_student.NOT_CHAPTERS) & {ch.doc for ch in BOOK} - {build_student.INSTRUCTOR_DOC}:
        assert f"{{doc}}`/{doc}`" in notes


def test_a_new_chapter_is_covered_without_editing_the_page(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nchapters:\n  - file: book/new\n")
    (tmp_path / "book" / "intro.md").write_text("# Intro\n")
    cells = [("code", "from dpadmm_book.exercises import admm as ex", ["remove-cell"]),
             ("markdown", "# A new chapter\n\n```{admonition} Learning objectives\n:class: tip\n* learn a thing\n```")]
    for k in (1, 2, 3):
        cells.append(("markdown", f"```{{exercise}}\n:label: new_ex_{k}\n\nDo {k}.\n```"))
        if k < 3:
            cells.append(("code", "answer = ...\nex.check_y_update(answer)", []))
    (tmp_path / "book" / "new.ipynb").write_text(json.dumps(_nb(*cells)))
    book = build_student.read_book(tmp_path)
    assert [e.checks for e in book[1].exercises] == [["admm.check_y_update"], ["admm.check_y_update"], []]
    assert not build_student.problems(book)
    notes = build_student.instructor_notes(tmp_path, with_mistakes=False)
    assert "### A new chapter" in notes and "* learn a thing" in notes and "{ref}`new_ex_3`" in notes
    (tmp_path / "book" / "new.ipynb").write_text(json.dumps(_nb(*cells[:4])))
    assert build_student.problems(build_student.read_book(tmp_path)), "two exercises, one check: must fail"


def test_make_student_is_a_target_and_the_readme_keeps_two_setup_commands():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^student: \$\(STAMP\)\n\t\$\(BIN\)/python tools/build_student\.py", makefile, flags=re.M)
    readme = (ROOT / "README.md").read_text()
    assert "make student" in readme
    two = readme.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^make \w+", two.split("```bash", 1)[1].split("```", 1)[0], flags=re.M)
    assert commands == ["make book", "make test"]


# ---------------------------------------------------------------------------- the student build
class _Text(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self._skip = [], 0

    def handle_starttag(self, tag, attrs):
        self._skip += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._skip -= tag in ("script", "style") and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _normal(text: str) -> str:
    for fancy, plain in (("’", "'"), ("‘", "'"), ("“", '"'), ("”", '"'), ("…", "...")):
        text = text.replace(fancy, plain)
    return " ".join(text.split())


def _page_text(path: Path) -> str:
    parser = _Text()
    parser.feed(path.read_text())
    return _normal("".join(parser.parts))


def _notebook_text(path: Path) -> str:
    if path.suffix != ".ipynb":
        return _normal(path.read_text())
    nb = json.loads(path.read_text())
    parts = []
    for cell in nb["cells"]:
        parts.append(build_student._source(cell))
        for output in cell.get("outputs", []):
            parts += [v if isinstance(v, str) else "".join(v) for v in output.get("data", {}).values()
                      if isinstance(v, (str, list))]
            parts.append("".join(output.get("text", "")))
    return _normal("\n".join(parts))


def solution_words(solution: str, elsewhere: str) -> list[str]:
    """A solution's own words: its code lines and its longest runs of plain prose that the page
    does not say anywhere else."""
    code = _code_lines(solution)
    prose = re.sub(r"^(`{3,}|~{3,}|:{3,}).*?^\1\s*$", "\n", solution, flags=re.S | re.M)
    prose = re.sub(r"\$\$.*?\$\$", "\n", prose, flags=re.S)
    runs = re.split(r"\$[^$]*\$|\{[\w:-]+\}`[^`]*`|`[^`]*`|\*+|[\"“”'‘’()—–:;.!?\[\]]|\n\s*\n", prose)
    runs = [" ".join(r.split()).strip(" ,") for r in runs]
    runs = [r for r in runs if len(r.split()) >= 5 and re.fullmatch(r"[A-Za-z0-9 ,\-]+", r)]
    runs = sorted(runs, key=len, reverse=True)[:3]
    return [w for w in code[:3] + runs if w not in elsewhere]


def _solutions_by_page():
    """For every TOC document: its solutions' own words, from the sources of the book."""
    pages = {}
    for chapter in BOOK:
        if chapter.path.suffix == ".ipynb":
            stripped, removed = build_student.strip_notebook(json.loads(chapter.path.read_text()), chapter.doc)
            elsewhere = _normal("\n".join(build_student._source(c) for c in stripped["cells"]))
        else:
            kept, removed = build_student.strip_markdown(chapter.path.read_text(), chapter.doc)
            elsewhere = _normal(kept)
        words = [solution_words(s.text, elsewhere) for s in removed]
        if removed:
            pages[chapter.doc] = (removed, words)
    return pages


def test_every_solution_has_words_of_its_own():
    pages = _solutions_by_page()
    assert set(pages) >= {ch.doc for ch in CHAPTERS}
    for doc, (removed, words) in pages.items():
        for solution, own in zip(removed, words):
            assert own, f"{doc}: solution of {solution.target!r} has no words of its own to look for"


@pytest.fixture(scope="module")
def student_build(fast_build):
    assert fast_build.ok, "the fast build failed; the student edition is built from it"
    result = build_student.build("fast", source=fast_build.stage, out=build_book.TEST_OUT / "student", reuse=True)
    assert result.ok, f"the student edition did not build:\n{result.log[-6000:]}"
    assert not result.executed, "the student edition must reuse the executed notebooks of the fast build"
    return result


def _html_pages(site: Path) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*.html")
            if "_static" not in p.parts and "_sources" not in p.parts}


def test_student_site_has_the_same_pages_except_the_instructor_page(fast_build, student_build):
    main = _html_pages(fast_build.html)
    assert f"{build_student.INSTRUCTOR_DOC}.html" in main
    assert _html_pages(student_build.html) == main - {f"{build_student.INSTRUCTOR_DOC}.html"}
    for chapter in CHAPTERS:
        page = (student_build.html / f"{chapter.doc}.html").read_text()
        for exercise in chapter.exercises:
            assert f'id="{exercise.label}"' in page, f"{exercise.label} is missing from the student edition"
        assert 'class="solution' not in page


def test_main_site_shows_every_solution_and_the_student_edition_none(fast_build, student_build):
    for doc, (removed, words) in _solutions_by_page().items():
        main = _page_text(fast_build.html / f"{doc}.html")
        student = _page_text(student_build.html / f"{doc}.html")
        for solution, own in zip(removed, words):
            assert all(w in main for w in own), (
                f"{doc}: the main site lacks words of the solution of {solution.target!r}: "
                f"{[w for w in own if w not in main]}")
            shown = [w for w in own if w in student]
            assert not shown, f"{doc}: the student site shows the solution of {solution.target!r}: {shown}"


def test_student_notebooks_contain_no_solution_text(student_build):
    pages = _solutions_by_page()
    downloads = sorted((student_build.html / "_sources").rglob("*.ipynb")) + sorted(
        (student_build.html / "_sources").rglob("*.md"))
    handouts = sorted(student_build.notebooks.rglob("*.ipynb")) + sorted(student_build.notebooks.rglob("*.md"))
    assert {p.stem for p in downloads} >= {Path(doc).name for doc in pages}
    assert {p.stem for p in handouts} >= {Path(ch.doc).name for ch in CHAPTERS}
    for path in downloads + handouts:
        doc = f"book/{path.stem}"
        if doc not in pages:
            continue
        text = _notebook_text(path)
        for solution, own in zip(*pages[doc]):
            shown = [w for w in own if w in text]
            assert not shown, f"{path}: contains the solution of {solution.target!r}: {shown}"


def test_downloads_drop_the_numbers_only_solutions_quote(student_build):
    nb = json.loads((student_build.html / "_sources" / "book" / "admm.ipynb").read_text())
    names = {o.get("metadata", {}).get("scrapbook", {}).get("name") for c in nb["cells"] for o in c.get("outputs", [])}
    assert names and not names & {"ex1_threshold", "ex3_grid", "ex3_ring", "ex3_complete"}


def test_handout_notebooks_have_no_outputs_and_run_fast(student_build):
    for path in sorted(student_build.notebooks.glob("*.ipynb")):
        nb = json.loads(path.read_text())
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert not any(c.get("outputs") or c.get("execution_count") for c in code), f"{path.name} has outputs"
        params = [c for c in code if "parameters" in c["metadata"].get("tags", [])]
        assert len(params) == 1 and "FAST = True" in build_student._source(params[0]), path.name
    assert not (student_build.notebooks / "instructor.md").exists()


def test_edition_blocks_show_each_edition_its_own_text():
    from bookbuild.solutions import student_text

    text = "a\n% edition: book\nfolded solutions\n% edition: student\n% ask your instructor\n% edition: end\nb\n"
    assert student_text(text) == "a\nask your instructor\nb\n"
    assert build_student.strip_markdown(text)[0] == "a\nask your instructor\nb\n"
    with pytest.raises(ValueError, match="without its"):
        student_text("% edition: book\nx\n")
    with pytest.raises(ValueError, match="must be a % comment"):
        student_text("% edition: student\nnot a comment\n% edition: end\n")


def test_student_landing_page_speaks_of_the_student_edition(fast_build, student_build):
    main = _page_text(fast_build.html / "book" / "intro.html")
    student = _page_text(student_build.html / "book" / "intro.html")
    assert "folded away right after" in main and "instructor notes" in main
    assert "folded" not in student and "instructor notes" not in student
    assert "This is the student edition" in student and "This is the student edition" not in main
