"""The classroom edition: a student build without solutions, and the instructor notes.

``make student`` writes the **student edition** of the book:

* ``_build/student/html`` — the same pages as ``make book`` with every solution *removed* (not
  folded): every ``{solution}`` directive (and sphinx-exercise's gated ``{solution-start}`` …
  ``{solution-end}`` form, and any cell tagged ``solution``) is deleted from the chapters, and so
  are the hidden glue values that only solutions quote. The instructor page is left out. Its
  download buttons give the executed notebooks, stripped the same way.
* ``_build/student/notebooks`` — the chapters as notebooks to hand out (e.g. on a JupyterHub),
  stripped the same way, without outputs, in the JupyterLab edition of ``tools/lab.py`` (glued
  numbers as inline expressions) and with ``FAST = True``.

The student edition is built from an **executed staging copy** of the book (``_build/stage``, what
``tools/build_book.py`` executes with papermill): nothing is executed twice. When that copy is
missing, from another mode, or older than the chapters and the library, the book is built first.

The **instructor notes** (``book/instructor.md``) include a part generated here at every build of
the book, from the chapters themselves: for every chapter of ``_toc.yml`` its title, learning
objectives (the chapter's "Learning objectives" admonition), prerequisites (the earlier chapters
it refers to), an estimate of the time it needs, its exercises (labels, which ones have an
automatic check and fit a lab session), and the mistakes the checks recognise (the messages the
checks give for the typical wrong answers of ``tests/exercise_answers.py``). A chapter added to
``_toc.yml`` later is covered without editing the page. ``tools/build_book.py`` calls
:func:`write_instructor_notes` when it stages the sources.

    python tools/build_student.py               # what `make student` runs (full mode)
    python tools/build_student.py --mode fast   # from the test build's staging copy
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import math
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))

import build_book  # noqa: E402

BUILD = build_book.BUILD
#: Where ``make student`` writes: ``stage`` (stripped executed sources), ``html``, ``notebooks``.
STUDENT = BUILD / "student"
STUDENT_HTML = STUDENT / "html"
STUDENT_NOTEBOOKS = STUDENT / "notebooks"

#: The instructor page, and the part of it generated from the chapters (written into the staged book).
INSTRUCTOR_DOC = "book/instructor"
INSTRUCTOR_PART = "book/_instructor_chapters.md"
#: The answer table of the checks (reference and typical wrong answers), see its docstring.
ANSWER_TABLE = ROOT / "tests" / "exercise_answers.py"

#: TOC documents that are not chapters (they need no exercises), and what they are instead. A new
#: page without exercises must be listed here: every other TOC document is a chapter and must have
#: a "Learning objectives" admonition, ≥ 3 exercises and ≥ 2 exercises with a check.
NOT_CHAPTERS = {
    "book/intro": "the preface: how to read the book, and its notation",
    "book/reproducibility": "the reproducibility table: generated from the chapters' claim records; it teaches "
                            "nothing new",
    "book/instructor": "this page",
    "book/bibliography": "the bibliography",
}
#: What every chapter must have.
MIN_EXERCISES, MIN_CHECKED = 3, 2

#: Cell tag for content that only the main edition shows (e.g. a code cell that is a solution).
SOLUTION_TAG = "solution"
#: Directives whose body is code or raw text, never scanned for nested directives.
VERBATIM = {"code-cell", "code-block", "code", "sourcecode", "math", "raw", "eval-rst", "literalinclude"}

#: Minutes: reading speed (words of prose per minute), per visible code cell (run it and read its
#: output), per exercise with a check (lab work) and per written exercise.
READING_WPM, MINUTES_PER_CODE_CELL, MINUTES_CODE_EXERCISE, MINUTES_WRITTEN_EXERCISE = 100, 1, 15, 10

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
_GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`(?P<key>[^`:<]+?)(?::[^`]*)?`")
_GLUE_DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\{glue(?::\w+)?\}\s+(?P<key>[^\s:]+)", re.M)
_GLUE_CALL = re.compile(r"\bglue\(\s*[\"'](?P<key>[^\"']+)[\"']")


# ====================================================================== MyST directives
@dataclass
class Directive:
    """One fenced MyST directive of a markdown text: lines ``start`` … ``end`` (the fences, inclusive)."""

    name: str
    arg: str
    start: int
    end: int
    options: dict = field(default_factory=dict)
    body: str = ""


def _closes(line: str, fence: tuple[str, int]) -> bool:
    char, length = fence
    stripped = line.strip()
    return len(stripped) >= length and set(stripped) == {char} and len(line) - len(line.lstrip(" ")) <= 3


def directives(text: str) -> list[Directive]:
    """Every fenced directive of a MyST text (nested ones too), skipping code blocks.

    A fence closes on a line of the same character at least as long (CommonMark), so a
    ``````{solution}`` with a ````` ```python ````` block inside is one directive.
    """
    lines = text.splitlines()
    found: list[Directive] = []
    stack: list[tuple[str, int, int]] = []  # (fence char, fence length, index in found)
    i = 0
    while i < len(lines):
        line = lines[i]
        if stack and _closes(line, stack[-1][:2]):
            found[stack.pop()[2]].end = i
            i += 1
            continue
        opening = _OPEN.match(line)
        if opening:
            fence, info = opening["fence"], opening["info"].strip()
            directive = _DIRECTIVE.match(info)
            if directive and directive["name"] not in VERBATIM:
                found.append(Directive(directive["name"], directive["arg"].strip(), i, len(lines) - 1))
                stack.append((fence[0], len(fence), len(found) - 1))
            else:  # a code block: its content is not markdown
                j = i + 1
                while j < len(lines) and not _closes(lines[j], (fence[0], len(fence))):
                    j += 1
                i = j + 1
                continue
        i += 1
    for d in found:
        inner = lines[d.start + 1: d.end] if d.end > d.start else []
        k = 0
        if inner and inner[0].strip() == "---":  # options as a YAML block
            close = next((j for j in range(1, len(inner)) if inner[j].strip() == "---"), None)
            if close is not None:
                d.options = yaml.safe_load("\n".join(inner[1:close])) or {}
                k = close + 1
        while k < len(inner) and _OPTION.match(inner[k]):
            option = _OPTION.match(inner[k])
            d.options[option["key"]] = option["value"].strip()
            k += 1
        d.body = "\n".join(inner[k:]).strip("\n")
    return found


# ====================================================================== removing solutions
@dataclass
class Solution:
    """Text removed from the student edition: the exercise it answers (if known) and its own words."""

    doc: str
    target: str
    text: str


def _strip_lines(text: str, gated: list[str] | None) -> tuple[str, list[tuple[str, str]], list[str] | None]:
    """Remove the solutions of one markdown text.

    ``gated`` is the open gated solution (``{solution-start}`` seen, ``{solution-end}`` not yet)
    carried over from earlier cells, as ``[target, removed text…]``, or ``None``.
    Returns the kept text, the removed ``(target, text)`` pairs and the gated state after it.
    """
    lines = text.splitlines(keepends=True)
    drop = [False] * len(lines)
    removed: list[tuple[str, str]] = []
    events = sorted(directives(text), key=lambda d: d.start)
    cursor = 0

    def take(start, end):
        for j in range(start, min(end, len(lines) - 1) + 1):
            drop[j] = True
        return "".join(lines[start:end + 1])

    for d in events:
        if d.start < cursor:
            continue  # inside a span already removed
        if gated is not None:
            if d.name == "solution-end":
                gated.append(take(cursor, d.end))
                removed.append((gated[0], "".join(gated[1:])))
                gated, cursor = None, d.end + 1
            continue
        if d.name == "solution":
            removed.append((d.arg, d.body))
            take(d.start, d.end)
            cursor = d.end + 1
        elif d.name == "solution-start":
            take(d.start, d.end)
            gated, cursor = [d.arg], d.end + 1
    if gated is not None and cursor < len(lines):
        gated.append(take(cursor, len(lines) - 1))
    if not any(drop):
        return text, removed, gated
    kept = "".join(line for line, gone in zip(lines, drop) if not gone)
    return re.sub(r"\n{3,}", "\n\n", kept), removed, gated


def strip_markdown(text: str, doc: str = "") -> tuple[str, list[Solution]]:
    """A MyST text without its solutions, and the solutions removed."""
    kept, removed, gated = _strip_lines(text, None)
    if gated is not None:
        raise ValueError(f"{doc}: a {{solution-start}} without its {{solution-end}}")
    return kept, [Solution(doc, target, body) for target, body in removed]


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def _parse(code: str) -> ast.Module | None:
    """A code cell's syntax tree (IPython ``%`` and ``!`` lines left out), ``None`` if it does not parse."""
    try:
        return ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return None


def _names_defined(code: str) -> set[str] | None:
    """Names a code cell binds (``None`` if it does not parse)."""
    tree = _parse(code)
    if tree is None:
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def strip_notebook(nb: dict, doc: str = "") -> tuple[dict, list[Solution]]:
    """A notebook without its solutions (a copy), and the solutions removed.

    Markdown cells lose their ``{solution}`` directives (and gated solutions); cells tagged
    ``solution`` and code cells inside a gated solution are dropped. A glue value that only the
    removed solutions quote loses its output, and a hidden (``remove-cell``) cell that only glues
    such values is dropped when no later cell uses a name it defines.
    """
    nb = json.loads(json.dumps(nb))
    cells, solutions, gated = [], [], None
    for cell in nb["cells"]:
        source = _source(cell)
        if SOLUTION_TAG in _tags(cell):
            solutions.append(Solution(doc, "", source))
            continue
        if cell["cell_type"] == "markdown":
            kept, removed, gated = _strip_lines(source, gated)
            solutions += [Solution(doc, target, body) for target, body in removed]
            if kept != source:
                if not kept.strip():
                    continue
                cell["source"] = kept.splitlines(keepends=True)
        elif gated is not None:
            gated.append(source)
            continue
        cells.append(cell)
    if gated is not None:
        raise ValueError(f"{doc}: a {{solution-start}} without its {{solution-end}}")
    quoted_in_solutions = {m["key"].strip() for s in solutions for m in _GLUE_ROLE.finditer(s.text)}
    quoted_in_solutions |= {m["key"] for s in solutions for m in _GLUE_DIRECTIVE.finditer(s.text)}
    quoted_elsewhere = {m["key"].strip() for c in cells if c["cell_type"] == "markdown"
                        for m in _GLUE_ROLE.finditer(_source(c))}
    quoted_elsewhere |= {m["key"] for c in cells if c["cell_type"] == "markdown"
                         for m in _GLUE_DIRECTIVE.finditer(_source(c))}
    secret = quoted_in_solutions - quoted_elsewhere
    kept_cells = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and secret:
            cell["outputs"] = [o for o in cell.get("outputs", [])
                               if o.get("metadata", {}).get("scrapbook", {}).get("name") not in secret]
            glued = set(_GLUE_CALL.findall(_source(cell)))
            if "remove-cell" in _tags(cell) and glued and glued <= secret:
                later = "\n".join(_source(c) for c in cells[i + 1:] if c["cell_type"] == "code")
                defined = _names_defined(_source(cell))
                if defined is not None and not any(re.search(rf"\b{re.escape(name)}\b", later)
                                                   for name in defined - {"glue"}):
                    continue
        kept_cells.append(cell)
    nb["cells"] = kept_cells
    return nb, solutions


# ====================================================================== reading the chapters
@dataclass
class Exercise:
    """One exercise of a chapter: its label, text, the checks its code cells call, and its solution."""

    doc: str
    label: str
    title: str
    text: str
    checks: list[str] = field(default_factory=list)
    solution: str = ""

    @property
    def checked(self) -> bool:
        """Asks for code and has an automatic check from ``dpadmm_lite.exercises``."""
        return bool(self.checks)

    @property
    def minutes(self) -> int:
        return MINUTES_CODE_EXERCISE if self.checked else MINUTES_WRITTEN_EXERCISE


@dataclass
class Chapter:
    """What the instructor notes and the tests need to know about one TOC document."""

    doc: str
    path: Path
    title: str
    objectives: str
    exercises: list[Exercise]
    words: int
    code_cells: int
    labels: set[str]
    references: set[str]
    text: str

    @property
    def is_chapter(self) -> bool:
        return self.doc not in NOT_CHAPTERS

    @property
    def checked(self) -> list[Exercise]:
        return [e for e in self.exercises if e.checked]

    @property
    def reading_minutes(self) -> int:
        return _round5(self.words / READING_WPM + MINUTES_PER_CODE_CELL * self.code_cells)

    @property
    def exercise_minutes(self) -> int:
        return _round5(sum(e.minutes for e in self.exercises))

    @property
    def lab_minutes(self) -> int:
        return _round5(sum(e.minutes for e in self.checked))


def _round5(minutes: float) -> int:
    return int(5 * math.ceil(minutes / 5)) if minutes > 0 else 0


def _blocks(path: Path) -> list[tuple[str, str, list[str]]]:
    """``(kind, source, tags)`` of every cell of a notebook, or of a MyST markdown file (one markdown block)."""
    if path.suffix == ".ipynb":
        return [(c["cell_type"], _source(c), _tags(c)) for c in json.loads(path.read_text())["cells"]]
    return [("markdown", path.read_text(), [])]


def _exercise_aliases(code: str) -> dict[str, str]:
    """Every name the imports of ``code`` bind, and the dotted name it stands for."""
    tree = _parse(code)
    if tree is None:
        return {}
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
    return aliases


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def check_calls(code: str, aliases: dict[str, str]) -> list[str]:
    """The check functions of ``dpadmm_lite.exercises`` that ``code`` calls, as ``"module.check_name"``."""
    tree = _parse(code)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if not name:
                continue
            head, _, rest = name.partition(".")
            full = aliases.get(head, head) + (f".{rest}" if rest else "")
            prefix = "dpadmm_lite.exercises."
            if full.startswith(prefix) and full.rsplit(".", 1)[-1].startswith("check_"):
                found.append(full[len(prefix):])
    return found


def _plain_words(markdown: str) -> int:
    text = re.sub(r"\$\$.*?\$\$", " ", markdown, flags=re.S)
    text = re.sub(r"\$[^$\n]*\$", " ", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)
    return len(re.findall(r"[A-Za-z][A-Za-z'’-]*", text))


def read_chapter(doc: str, root: Path = ROOT) -> Chapter:
    """Read one TOC document (``.ipynb`` or MyST ``.md``) into a :class:`Chapter`."""
    path = next(p for p in (root / f"{doc}.ipynb", root / f"{doc}.md") if p.exists())
    blocks = _blocks(path)
    aliases: dict[str, str] = {}
    for kind, source, _ in blocks:
        if kind == "code":
            aliases.update(_exercise_aliases(source))
    title, objectives = "", ""
    exercises: list[Exercise] = []
    by_label: dict[str, Exercise] = {}
    current: Exercise | None = None
    words = code_cells = 0
    labels, references, texts = set(), set(), []
    for kind, source, tags in blocks:
        if kind == "code":
            if "remove-cell" not in tags and "parameters" not in tags:
                code_cells += 1
            if current is not None:
                current.checks += [c for c in check_calls(source, aliases) if c not in current.checks]
            continue
        texts.append(source)
        if not title:
            heading = re.search(r"^# (.+)$", source, flags=re.M)
            title = heading.group(1).strip() if heading else title
        found = directives(source)
        for d in found:
            if d.name == "admonition" and d.arg.strip().lower() == "learning objectives" and not objectives:
                objectives = d.body
            if d.name == "exercise":
                label = str(d.options.get("label", ""))
                current = Exercise(doc, label, d.arg, d.body)
                exercises.append(current)
                by_label[label] = current
            if "label" in d.options:
                labels.add(str(d.options["label"]))
        for d in found:
            if d.name == "solution" and d.arg in by_label:
                by_label[d.arg].solution += d.body + "\n"
        labels |= set(re.findall(r"^\(([\w:-]+)\)=\s*$", source, flags=re.M))
        references |= {m.split("<")[-1].rstrip(">").strip() for m in
                       re.findall(r"\{(?:prf:ref|ref|numref|eq)\}`([^`]+)`", source)}
        references |= {"doc:" + _resolve_doc(doc, m.split("<")[-1].rstrip(">").strip())
                       for m in re.findall(r"\{doc\}`([^`]+)`", source)}
        prose = _strip_lines(source, None)[0]
        for d in directives(prose):
            if d.name == "exercise":
                prose = prose.replace(d.body, "")
        words += _plain_words(re.sub(r"```.*?```", " ", prose, flags=re.S))
    return Chapter(doc, path, title or doc, objectives, exercises, words, code_cells, labels, references,
                   " ".join(" ".join(texts).split()))


def _resolve_doc(doc: str, target: str) -> str:
    if target.startswith("/"):
        return target.lstrip("/")
    return str((Path(doc).parent / target)).replace("\\", "/")


def read_book(root: Path = ROOT) -> list[Chapter]:
    """Every document of ``_toc.yml`` in book order."""
    return [read_chapter(doc, root) for doc in build_book.toc_files(root)]


def prerequisites(chapter: Chapter, book: list[Chapter]) -> list[Chapter]:
    """The earlier chapters that ``chapter`` refers to: their labels, their page, or their title."""
    earlier = []
    for other in book:
        if other.doc == chapter.doc:
            break
        if not other.is_chapter:
            continue
        if (other.labels & chapter.references or f"doc:{other.doc}" in chapter.references
                or (len(other.title) > 12 and other.title in chapter.text)):
            earlier.append(other)
    return earlier


def problems(book: list[Chapter]) -> list[str]:
    """What keeps the book from being a classroom edition: chapters without enough exercises or checks."""
    out = []
    for ch in book:
        if not ch.is_chapter:
            continue
        if not ch.objectives:
            out.append(f"{ch.doc}: no 'Learning objectives' admonition")
        if len(ch.exercises) < MIN_EXERCISES:
            out.append(f"{ch.doc}: {len(ch.exercises)} exercises, needs at least {MIN_EXERCISES}")
        if len(ch.checked) < MIN_CHECKED:
            out.append(f"{ch.doc}: {len(ch.checked)} exercises with a check from dpadmm_lite.exercises, needs at "
                       f"least {MIN_CHECKED}")
        for e in ch.exercises:
            if not e.label:
                out.append(f"{ch.doc}: an exercise without a :label:")
    return out


# ====================================================================== the checks and their mistakes
def answer_table():
    """``tests/exercise_answers.py`` (the reference and typical wrong answers of every check)."""
    name = "_dpadmm_exercise_answers"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ANSWER_TABLE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the file executes
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def check_function(name: str):
    """The check ``"module.check_name"`` of ``dpadmm_lite.exercises``."""
    module, _, function = name.rpartition(".")
    return getattr(importlib.import_module(f"dpadmm_lite.exercises.{module}"), function)


def mistake_messages(name: str, table=None) -> list[str]:
    """What the check ``name`` tells a student for each typical wrong answer of the answer table
    (the diagnosis, without the ✗ heading and the hint)."""
    table = table or answer_table()
    entry = table.ANSWERS.get(name)
    if entry is None:
        return []
    check = check_function(name)
    out = []
    for words, make in entry.wrong.items():
        try:
            message = entry.run(check, make()).message
        except Exception as error:  # a broken entry must not stop the book build; tests/test_classroom.py fails on it
            out.append(f"*(the typical wrong answer “{words}” could not be checked: {type(error).__name__}: {error})*")
            continue
        detail = message.split(" Hint: ")[0]
        if detail.startswith("✗ ") and ": " in detail:
            detail = detail.split(": ", 1)[1]
        if detail not in out:
            out.append(detail)
    return out


# ====================================================================== the instructor notes
def _myst_text(text: str) -> str:
    """A check's message as MyST text (no math, no substitutions, no raw HTML)."""
    return text.replace("$", r"\$").replace("{{", "{ {").replace("<", "&lt;")


def instructor_notes(root: Path = ROOT, *, with_mistakes: bool = True) -> str:
    """The generated part of the instructor page: one section per document of ``_toc.yml``."""
    book = read_book(root)
    out = ["<!-- Generated by tools/build_student.py from the chapters at every build: do not edit. -->", ""]
    table = None
    if with_mistakes:
        try:
            table = answer_table()
        except Exception as error:  # the page says so; tests/test_classroom.py fails on it
            with_mistakes = False
            out += ["```{warning}", f"tests/exercise_answers.py could not be read ({type(error).__name__}: "
                    f"{_myst_text(str(error))}): the mistakes the checks recognise are not listed.", "```", ""]
    missing = problems(book)
    if missing:
        out += ["```{warning}", "These chapters do not yet meet the classroom rules (the test suite fails until they "
                "do):", ""] + [f"* {_myst_text(p)}" for p in missing] + ["```", ""]
    chapters = [ch for ch in book if ch.is_chapter]
    out += ["| chapter | exercises | with a check | read and run | exercises | lab session |",
            "| --- | --- | --- | --- | --- | --- |"]
    for ch in chapters:
        out.append(f"| {{doc}}`/{ch.doc}` | {len(ch.exercises)} | {len(ch.checked)} | {ch.reading_minutes} min "
                   f"| {ch.exercise_minutes} min | {ch.lab_minutes} min |")
    out.append("")
    for ch in chapters:
        out += [f"### {ch.title}", ""]
        out += [f"{{doc}}`Open the chapter </{ch.doc}>` · {len(ch.exercises)} exercises, {len(ch.checked)} with an "
                f"automatic check · about {ch.reading_minutes} min to read and run, {ch.exercise_minutes} min of "
                "exercises.", ""]
        objectives = _GLUE_ROLE.sub("(a number of the chapter)", ch.objectives.strip())
        out += ["**Learning objectives.** " + (objectives if objectives else
                                                "*(the chapter has no Learning objectives admonition yet)*"), ""]
        before = prerequisites(ch, book)
        out += ["**Prerequisites.** " + (
            "The earlier chapters it refers to: " + ", ".join(f"{{doc}}`/{p.doc}`" for p in before) + "."
            if before else "None beyond the background above."), ""]
        out += [f"**Time.** About {ch.reading_minutes} min to read the chapter and run its cells ({ch.words:,} words "
                f"of prose, {ch.code_cells} visible code cells), and {ch.exercise_minutes} min for all its exercises; "
                f"the exercises with a check make a lab session of about {ch.lab_minutes} min.", ""]
        out += ["| exercise | kind | check | where |", "| --- | --- | --- | --- |"]
        for e in ch.exercises:
            kind = "code, checked automatically" if e.checked else "written (derivation or discussion)"
            checks = ", ".join(f"`{c}`" for c in e.checks) or "—"
            where = "lab session" if e.checked else "homework or class discussion"
            out.append(f"| {{ref}}`{e.label}` | {kind} | {checks} | {where} |")
        out.append("")
        if with_mistakes:
            lines = []
            for e in ch.checked:
                for name in e.checks:
                    try:
                        messages = mistake_messages(name, table)
                    except Exception as error:  # e.g. a check renamed: the page says so, the tests fail
                        messages = [f"*(the check could not be run: {type(error).__name__}: {error})*"]
                    if messages:
                        lines.append(f"* {{ref}}`{e.label}` (`{name}`):")
                        lines += [f"  * {_myst_text(m)}" for m in messages]
            if lines:
                out += ["**Mistakes the checks recognise** (what a student sees for each typical wrong answer; the "
                        "check adds a hint):", ""] + lines + [""]
    others = [ch for ch in book if not ch.is_chapter and ch.doc != INSTRUCTOR_DOC]
    if others:
        out += ["### Other pages", ""]
        out += [f"* {{doc}}`/{ch.doc}`: {NOT_CHAPTERS[ch.doc]}." for ch in others] + [""]
    return "\n".join(out)


def write_instructor_notes(stage: Path) -> Path | None:
    """Write the generated part of the instructor page into a staged book (if the page is there)."""
    if not (stage / f"{INSTRUCTOR_DOC}.md").exists():
        return None
    target = stage / INSTRUCTOR_PART
    target.write_text(instructor_notes(stage) + "\n")
    return target


# ====================================================================== the student edition
@dataclass
class StudentBuild:
    mode: str
    html: Path = STUDENT_HTML
    notebooks: Path = STUDENT_NOTEBOOKS
    ok: bool = False
    log: str = ""
    seconds: float = 0.0
    executed: bool = False
    solutions: list[Solution] = field(default_factory=list)


def stale_reasons(stage: Path, mode: str, root: Path = ROOT) -> list[str]:
    """Why ``stage`` is not a fresh executed copy of the book in ``mode`` (empty: reuse it)."""
    reasons = []
    record = stage.parent / "last-build.json"  # written by build_book.build next to its stage
    if not record.exists():
        return [f"no build record ({record})"]
    last = json.loads(record.read_text())
    if last.get("mode") != mode or not last.get("ok"):
        reasons.append(f"the last build was {last.get('mode')!r} mode, ok={last.get('ok')}; asked for {mode!r}")
    for name in ["_toc.yml", "_config.yml"] + [f"{doc}.md" for doc in build_book.toc_files(root)
                                                 if (root / f"{doc}.md").exists()]:
        staged = stage / name
        if not staged.exists() or staged.read_text() != (root / name).read_text():
            reasons.append(f"{name} changed since the book was built")
    library = max(p.stat().st_mtime for p in (root / "dpadmm_lite").rglob("*.py"))
    for source in build_book.toc_notebooks(root):
        staged = stage / source.relative_to(root)
        if not staged.exists():
            reasons.append(f"{staged} is missing")
            continue
        nb = json.loads(staged.read_text())
        fast = nb.get("metadata", {}).get("papermill", {}).get("parameters", {}).get("FAST")
        if fast is not (mode == "fast"):
            reasons.append(f"{staged.name} was executed with FAST={fast}")
        ran = [(c["cell_type"], _source(c)) for c in nb["cells"] if "injected-parameters" not in _tags(c)]
        now = [(c["cell_type"], _source(c)) for c in json.loads(source.read_text())["cells"]]
        if ran != now:
            reasons.append(f"{source.name} changed since it was executed")
        if staged.stat().st_mtime < library:
            reasons.append(f"the library changed since {source.name} was executed")
    return reasons


def make_student_stage(source: Path, target: Path) -> list[Solution]:
    """Copy an executed staging copy to ``target`` without solutions and without the instructor page."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=lambda d, names: ["_build"] if Path(d) == source else [])
    toc_path = target / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())

    def drop(entries):
        kept = []
        for entry in entries or []:
            if entry.get("file") == INSTRUCTOR_DOC:
                continue
            for key in ("sections", "chapters"):
                if key in entry:
                    entry[key] = drop(entry[key])
            kept.append(entry)
        return kept

    toc["chapters"] = drop(toc.get("chapters"))
    for part in toc.get("parts", []) or []:
        part["chapters"] = drop(part.get("chapters"))
    toc_path.write_text("# The student edition's table of contents (tools/build_student.py)\n"
                        + yaml.safe_dump(toc, sort_keys=False, allow_unicode=True))
    for name in (f"{INSTRUCTOR_DOC}.md", INSTRUCTOR_PART):
        (target / name).unlink(missing_ok=True)
    config_path = target / "_config.yml"
    config = config_path.read_text()
    config = re.sub(r"^title:\s*(.+)$",
                    lambda m: "title: " + json.dumps(yaml.safe_load(m.group(1)) + " — student edition", ensure_ascii=False),
                    config, count=1, flags=re.M)
    config_path.write_text(config)
    solutions: list[Solution] = []
    for path in sorted((target / "book").rglob("*")):
        doc = path.relative_to(target).with_suffix("").as_posix()
        if path.suffix == ".ipynb":
            nb, removed = strip_notebook(json.loads(path.read_text()), doc)
            path.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
        elif path.suffix == ".md":
            text, removed = strip_markdown(path.read_text(), doc)
            path.write_text(text)
        else:
            continue
        solutions += removed
    return solutions


def write_student_notebooks(root: Path = ROOT, target: Path = STUDENT_NOTEBOOKS) -> list[Path]:
    """The chapters to hand out: stripped, without outputs, JupyterLab edition, ``FAST = True``."""
    import lab  # tools/lab.py: the JupyterLab edition (glued numbers as inline expressions)

    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root / "book", target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    (target / "instructor.md").unlink(missing_ok=True)
    cites = lab.bibliography(root / "book" / "references.bib")
    written = []
    for path in sorted(target.rglob("*")):
        if path.suffix == ".ipynb":
            nb, _ = strip_notebook(json.loads(path.read_text()), path.stem)
            for cell in nb["cells"]:
                if cell["cell_type"] == "code":
                    cell["outputs"], cell["execution_count"] = [], None
            path.write_text(json.dumps(lab.lab_notebook(nb, cites, fast=True), indent=1, ensure_ascii=False) + "\n")
            written.append(path)
        elif path.suffix == ".md":
            path.write_text(strip_markdown(path.read_text(), path.stem)[0])
    (target / "README.md").write_text(
        "# The student edition of the chapters\n\nWritten by `make student` (tools/build_student.py) from `book/`: "
        "no solutions, no outputs, `FAST = True` (small grids; set it to False for the published runs). "
        "Needs the `dpadmm_lite` library of the same checkout (`pip install -e .`). Do not edit: it is written "
        "anew.\n")
    return written


def build(mode: str = "full", *, source: Path | None = None, out: Path = STUDENT,
          reuse: bool | None = None) -> StudentBuild:
    """Build the student edition from an executed staging copy into ``out``/{stage, html, notebooks}.

    ``source`` defaults to ``_build/stage`` (what ``make book`` executed). ``reuse=None`` reuses it
    when :func:`stale_reasons` finds nothing and builds the book first otherwise; ``reuse=True``
    trusts it (the test suite, right after its own build, into ``_build/test/student``).
    """
    if mode not in build_book.CELL_TIMEOUT:
        raise ValueError(f"mode must be one of {sorted(build_book.CELL_TIMEOUT)}, got {mode!r}")
    start = time.perf_counter()
    result = StudentBuild(mode, html=Path(out) / "html", notebooks=Path(out) / "notebooks")
    source = build_book.STAGE if source is None else Path(source)
    reasons = [] if reuse else stale_reasons(source, mode)
    if reuse is False or reasons:
        print("executing the book first: " + ("; ".join(reasons[:5]) or "asked to"), flush=True)
        book = build_book.build(mode)
        result.executed = True
        if not book.ok:
            result.log = "the book did not build:\n" + book.site_log[-8000:] + "\n".join(
                f"{n.path}: {n.error}" for n in book.notebooks if not n.ok)
            result.seconds = time.perf_counter() - start
            return result
        source = book.stage
    result.solutions = make_student_stage(source, Path(out) / "stage")
    result.ok, result.log = build_book.build_site(mode, Path(out) / "stage", result.html)
    if result.ok:
        write_student_notebooks(ROOT, result.notebooks)
    result.seconds = time.perf_counter() - start
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=sorted(build_book.CELL_TIMEOUT), default="full")
    parser.add_argument("--execute", action="store_true", help="execute the book even if _build/stage is fresh")
    args = parser.parse_args(argv)
    result = build(args.mode, reuse=False if args.execute else None)
    if not result.ok:
        print(result.log[-20000:])
    print(f"{'built' if result.ok else 'FAILED'}: student edition, {len(result.solutions)} solutions removed, "
          f"{result.seconds:.0f} s" + (f" → {result.html} and {result.notebooks}" if result.ok else ""))
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
