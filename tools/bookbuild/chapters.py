"""What a chapter holds for a class: its title, learning objectives, exercises and the checks
they call, the labels it defines and refers to, and how long it takes.

Every document of ``_toc.yml`` not listed in :data:`NOT_CHAPTERS` is a chapter and must meet the
classroom rules (:func:`problems`): a "Learning objectives" admonition, at least
:data:`MIN_EXERCISES` exercises and :data:`MIN_CHECKED` of them with an automatic check.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .myst import cell_source, cell_tags, directives, parse_code
from .solutions import without_solutions
from .toc import ROOT, toc_files

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

#: Minutes: reading speed (words of prose per minute), per visible code cell (run it and read its
#: output), per exercise with a check (lab work) and per written exercise.
READING_WPM, MINUTES_PER_CODE_CELL, MINUTES_CODE_EXERCISE, MINUTES_WRITTEN_EXERCISE = 100, 1, 15, 10


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
        """Asks for code and has an automatic check from ``dpadmm_book.exercises``."""
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
        return [(c["cell_type"], cell_source(c), cell_tags(c)) for c in json.loads(path.read_text())["cells"]]
    return [("markdown", path.read_text(), [])]


def _exercise_aliases(code: str) -> dict[str, str]:
    """Every name the imports of ``code`` bind, and the dotted name it stands for."""
    tree = parse_code(code)
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
    """The check functions of ``dpadmm_book.exercises`` that ``code`` calls, as ``"module.check_name"``."""
    tree = parse_code(code)
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
            prefix = "dpadmm_book.exercises."
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
        prose = without_solutions(source)
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
    return [read_chapter(doc, root) for doc in toc_files(root)]


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
            out.append(f"{ch.doc}: {len(ch.checked)} exercises with a check from dpadmm_book.exercises, needs at "
                       f"least {MIN_CHECKED}")
        for e in ch.exercises:
            if not e.label:
                out.append(f"{ch.doc}: an exercise without a :label:")
    return out
