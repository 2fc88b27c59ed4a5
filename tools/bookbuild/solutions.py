"""A chapter without its solutions: what the student edition shows.

Every ``{solution}`` directive, sphinx-exercise's gated ``{solution-start}`` … ``{solution-end}``
form and any cell tagged ``solution`` is removed (not folded), and so are the hidden glue values
that only solutions quote.

Text that differs between the editions is marked with MyST comment lines, which every renderer
(Sphinx, jupyterlab-myst) skips::

    % edition: book
    Solutions are folded away right after each exercise.
    % edition: student
    % Ask your instructor for the solutions.
    % edition: end

The book and the JupyterLab edition show the ``book`` lines as they are (the student lines are
comments); the student edition drops the ``book`` lines and uncomments the ``student`` ones.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass

from .myst import GLUE_CALL, GLUE_DIRECTIVE, GLUE_ROLE, cell_source, cell_tags, directives, parse_code

#: Cell tag for content that only the main edition shows (e.g. a code cell that is a solution).
SOLUTION_TAG = "solution"


@dataclass
class Solution:
    """Text removed from the student edition: the exercise it answers (if known) and its own words."""

    doc: str
    target: str
    text: str


_EDITION = re.compile(r"^%\s*edition:\s*(book|student|end)\s*$")


def student_text(text: str) -> str:
    """``text`` as the student edition shows it: ``book`` blocks dropped, ``student`` blocks
    uncommented (module docstring). A block left open, or a ``student`` line that is not a
    comment, is an error: the edition must not show the wrong text silently."""
    if "edition:" not in text:
        return text
    kept, block = [], None
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        marker = _EDITION.match(line.rstrip("\n"))
        if marker:
            block = None if marker[1] == "end" else marker[1]
            continue
        if block == "book":
            continue
        if block == "student":
            if not line.startswith("%"):
                raise ValueError(f"line {number}: a line of an 'edition: student' block must be a % comment")
            line = line[2:] if line.startswith("% ") else line[1:]
        kept.append(line)
    if block is not None:
        raise ValueError(f"an 'edition: {block}' block without its '% edition: end'")
    return "".join(kept)


def _strip_lines(text: str, gated: list[str] | None) -> tuple[str, list[tuple[str, str]], list[str] | None]:
    """Remove the solutions of one markdown text.

    ``gated`` is the open gated solution (``{solution-start}`` seen, ``{solution-end}`` not yet)
    carried over from earlier cells, as ``[target, removed text…]``, or ``None``.
    Returns the kept text, the removed ``(target, text)`` pairs and the gated state after it.
    """
    text = student_text(text)
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


def without_solutions(text: str) -> str:
    """One markdown text (e.g. one cell) without its solutions; a gated solution may run on past it."""
    return _strip_lines(text, None)[0]


def strip_markdown(text: str, doc: str = "") -> tuple[str, list[Solution]]:
    """A MyST text without its solutions, and the solutions removed."""
    kept, removed, gated = _strip_lines(text, None)
    if gated is not None:
        raise ValueError(f"{doc}: a {{solution-start}} without its {{solution-end}}")
    return kept, [Solution(doc, target, body) for target, body in removed]


def _names_defined(code: str) -> set[str] | None:
    """Names a code cell binds (``None`` if it does not parse)."""
    tree = parse_code(code)
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
        source = cell_source(cell)
        if SOLUTION_TAG in cell_tags(cell):
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
    quoted_in_solutions = {m["key"].strip() for s in solutions for m in GLUE_ROLE.finditer(s.text)}
    quoted_in_solutions |= {m["key"] for s in solutions for m in GLUE_DIRECTIVE.finditer(s.text)}
    quoted_elsewhere = {m["key"].strip() for c in cells if c["cell_type"] == "markdown"
                        for m in GLUE_ROLE.finditer(cell_source(c))}
    quoted_elsewhere |= {m["key"] for c in cells if c["cell_type"] == "markdown"
                         for m in GLUE_DIRECTIVE.finditer(cell_source(c))}
    secret = quoted_in_solutions - quoted_elsewhere
    kept_cells = []
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "code" and secret:
            cell["outputs"] = [o for o in cell.get("outputs", [])
                               if o.get("metadata", {}).get("scrapbook", {}).get("name") not in secret]
            glued = set(GLUE_CALL.findall(cell_source(cell)))
            if "remove-cell" in cell_tags(cell) and glued and glued <= secret:
                later = "\n".join(cell_source(c) for c in cells[i + 1:] if c["cell_type"] == "code")
                defined = _names_defined(cell_source(cell))
                if defined is not None and not any(re.search(rf"\b{re.escape(name)}\b", later)
                                                   for name in defined - {"glue"}):
                    continue
        kept_cells.append(cell)
    nb["cells"] = kept_cells
    return nb, solutions
