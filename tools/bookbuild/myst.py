"""Reading MyST: the fenced directives of a text, glue references, and notebook cells."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import yaml

#: Directives whose body is code or raw text, never scanned for nested directives.
VERBATIM = {"code-cell", "code-block", "code", "sourcecode", "math", "raw", "eval-rst", "literalinclude"}

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>.*)$")
_DIRECTIVE = re.compile(r"^\{(?P<name>[\w:.-]+)\}\s*(?P<arg>.*)$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")
#: ``{glue}`key``` / ``{glue:text}`key:fmt``` in a text, ```{glue} key`` as a directive, ``glue("key", …)`` in code.
GLUE_ROLE = re.compile(r"\{glue(?::\w+)?\}`(?P<key>[^`:<]+?)(?::[^`]*)?`")
GLUE_DIRECTIVE = re.compile(r"^\s*(`{3,}|:{3,})\{glue(?::\w+)?\}\s+(?P<key>[^\s:]+)", re.M)
GLUE_CALL = re.compile(r"\bglue\(\s*[\"'](?P<key>[^\"']+)[\"']")


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


def cell_source(cell: dict) -> str:
    """A notebook cell's source as one string."""
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def cell_tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def parse_code(code: str) -> ast.Module | None:
    """A code cell's syntax tree (IPython ``%`` and ``!`` lines left out), ``None`` if it does not parse."""
    try:
        return ast.parse("\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))))
    except SyntaxError:
        return None
