"""`make assignments`: otter-grader assignments from the chapters' exercises and checks (one source).

For every chapter with checked exercises this writes an Otter Assign *master notebook*
(``_build/assignments/<chapter>/<chapter>.ipynb``) and runs ``otter assign`` on it, which writes

* ``dist/student/`` — the notebook to hand out (each exercise as the chapter asks it, with its
  check, which answers like a teacher as the student works) and the public tests;
* ``dist/autograder/`` — ``autograder.zip``, what a teacher runs with ``otter run`` on the
  submissions (or uploads to a grading service), and the master notebook with the solutions.

Everything comes from the book: the exercise's text and code cell from the chapter, the
solution's code from the chapter's own solution, the check from ``dpadmm_book.exercises``. Each
question's grading tests are

* the check the student sees (public): it fails with the check's own message — the hint naming
  the mistake — unless the check accepts the answer;
* a hidden case: the answer equals the answer table's reference (``tests/exercise_answers.py``,
  computed apart from the check), its value written into the hidden test when the assignment is
  built (a function answer: its draws on a seed the student never sees match the reference's
  mean and spread).

    python tools/assignments.py                     # every chapter, into _build/assignments
    python tools/assignments.py --chapter admm      # one chapter
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tests"))

from bookbuild.chapters import read_chapter  # noqa: E402
from bookbuild.myst import cell_source  # noqa: E402
from bookbuild.toc import BUILD, toc_notebooks  # noqa: E402

OUT = BUILD / "assignments"
#: The seed of the hidden draws of a function answer (never in the student's notebook).
HIDDEN_SEED = 20260917


class AssignmentError(RuntimeError):
    """An exercise cannot be turned into an assignment question as it is written."""


def _raw(text: str) -> dict:
    return {"cell_type": "raw", "metadata": {}, "source": text}


def _md(text: str) -> dict:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "source": text, "outputs": [], "execution_count": None}


def chapter_imports(nb: dict, used: str | None = None) -> str:
    """The import statements of the chapter's first code cell (what its exercise cells rely on),
    without ``myst_nb`` (the book's glue); with ``used`` (code), only those binding a name it uses."""
    code = next(cell_source(c) for c in nb["cells"] if c["cell_type"] == "code")
    names = set(re.findall(r"\b\w+\b", used)) if used is not None else None
    lines = []
    for node in ast.parse(code).body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("myst_nb"):
            continue
        bound = {(a.asname or a.name).split(".")[0] for a in node.names}
        if names is None or bound & names:
            lines.append(ast.get_source_segment(code, node))
    return "\n".join(lines)


def _renamed(code: str, old: str, new: str) -> str:
    return re.sub(rf"\b{re.escape(old)}\b", new, code) if old != new else code


def solution_code(solution: str, label: str) -> str:
    """The code of a chapter's solution: its first code block, else its inline ``answer = …``."""
    block = re.search(r"```\{?(?:code-cell|python|ipython3?)\}?[^\n]*\n(.*?)```", solution, re.S)
    if block:
        return block.group(1).strip("\n")
    inline = re.findall(r"`(answer\s*=[^`]+)`", solution)
    if inline:
        return inline[-1]
    raise AssignmentError(f"the solution of {label} shows no code to grade with")


def split_exercise_cell(source: str, check: str) -> tuple[str, str, str, str]:
    """``(before, prompt, after, argument)`` of a chapter's exercise cell: the lines before what the
    student writes, what the student writes (``answer = ...`` or a ``def`` whose body is ``...``),
    the lines after (the check call), and the name the check is called with."""
    lines = source.splitlines()
    call = re.search(rf"\bex\.{check}\(\s*(\w+)\s*\)", source)
    if call is None:
        raise AssignmentError(f"the cell does not call ex.{check}(<name>)")
    argument = call.group(1)
    start = next((i for i, line in enumerate(lines) if re.match(rf"(def {argument}\(|{argument}\s*=\s*\.\.\.)", line)), None)
    if start is None:
        raise AssignmentError(f"the cell has no `{argument} = ...` nor `def {argument}(...)` for the student to fill in")
    end = start + 1
    if lines[start].startswith("def "):
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()):
            end += 1
    prompt = "\n".join(lines[start:end]).rstrip()
    return "\n".join(lines[:start]).rstrip(), prompt, "\n".join(lines[end:]).strip(), argument


def _literal(value) -> str:
    """Python source that evaluates to ``value`` (numbers, arrays, strings), exactly."""
    if isinstance(value, str):
        return repr(value)
    array = np.asarray(value, dtype=float)
    return f"np.array({json.dumps(array.tolist())})" if array.ndim else repr(float(array))


def hidden_case(key: str, argument: str) -> str | None:
    """The hidden grading case of the check ``key`` (``"<module>.<check>"``), from the answer table."""
    import exercise_answers

    reference = exercise_answers.ANSWERS[key].reference()
    config = '""" # BEGIN TEST CONFIG\nhidden: true\n""" # END TEST CONFIG\n'
    if callable(reference):
        params = list(inspect.signature(reference).parameters)
        if params != ["rng", "zeta", "n", "d"]:
            return None
        draws = reference(np.random.default_rng(HIDDEN_SEED), 1.5, 20_000, 4)
        norms = np.linalg.norm(draws, axis=1)
        return (config + f"_x = {argument}(np.random.default_rng({HIDDEN_SEED}), 1.5, 20000, 4)\n"
                "assert np.shape(_x) == (20000, 4)\n"
                f"np.testing.assert_allclose([np.linalg.norm(_x, axis=1).mean(), np.linalg.norm(_x, axis=1).std()], "
                f"[{norms.mean():.6g}, {norms.std():.6g}], rtol=0.05)")
    if isinstance(reference, str):
        return config + f"assert {argument} == {_literal(reference)}"
    return config + (f"np.testing.assert_allclose(np.asarray({argument}, dtype=float), {_literal(reference)}, "
                     "rtol=1e-6, atol=1e-9)")


def master_notebook(doc: str) -> dict:
    """The Otter Assign master notebook of the chapter ``doc`` (e.g. ``"book/admm"``)."""
    chapter = read_chapter(doc)
    nb = json.loads(chapter.path.read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    name = Path(doc).name
    module = re.search(r"from dpadmm_book\.exercises import (\w+) as ex", chapter_imports(nb))
    if module is None:
        raise AssignmentError(f"{doc} does not import its checks as `ex`")
    out = [_raw(f"# ASSIGNMENT CONFIG\nname: {name}\ngenerate:\n  pdf: false\n  filtering: false\n"
                "export_cell: false\ncheck_all_cell: false\nsolutions_pdf: false\ntemplate_pdf: false\n"
                "tests:\n  files: false\n"),
           _md(f"# {chapter.title}: exercises\n\nThe checked exercises of the chapter *{chapter.title}*. "
               "Each cell ends with the chapter's check: run it, read its answer, try again. "
               "`grader.check(\"q1\")` runs the same check as a test."),
           None]  # the imports, once the questions say which names they use
    number = 0
    for exercise in chapter.exercises:
        for check in exercise.checks:
            check_name = check.split(".")[-1]
            cell = next((cell_source(c) for c in cells if re.search(rf"\bex\.{check_name}\(", cell_source(c))), None)
            if cell is None:
                raise AssignmentError(f"{doc}: no code cell calls ex.{check_name}")
            before, prompt, after, argument = split_exercise_cell(cell, check_name)
            solution = solution_code(exercise.solution, exercise.label)
            number += 1
            # every chapter cell answers in `answer`; otter grades once the whole notebook ran, so
            # each question keeps its own name (answer_1, answer_2 …)
            if argument == "answer":
                before, prompt, after, solution = (_renamed(part, "answer", f"answer_{number}")
                                                   for part in (before, prompt, after, solution))
                argument = f"answer_{number}"
            key = f"{module.group(1)}.{check_name}"
            out += [_raw(f"# BEGIN QUESTION\nname: q{number}\npoints: 1"),
                    _md(f"**Exercise {number}: {exercise.title}**\n\n{exercise.text.strip()}"),
                    _raw("# BEGIN SOLUTION"),
                    _code("\n".join(part for part in (
                        before, "# BEGIN SOLUTION NO PROMPT", solution, "# END SOLUTION",
                        f'""" # BEGIN PROMPT\n{prompt}\n""" # END PROMPT', after) if part)),
                    _raw("# END SOLUTION"),
                    _raw("# BEGIN TESTS"),
                    _code(f"_feedback = ex.{check_name}({argument})  # the check the student sees\n"
                          "assert _feedback, _feedback.message")]
            hidden = hidden_case(key, argument)
            if hidden:
                out.append(_code(hidden))
            out += [_raw("# END TESTS"), _raw("# END QUESTION")]
    if not number:
        raise AssignmentError(f"{doc} has no checked exercise")
    out[2] = _code(chapter_imports(nb, used="\n".join(cell_source(c) for c in out[3:] if c["cell_type"] == "code")
                                   + "\nex"))
    return {"cells": out, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                      "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def chapters_with_checks() -> list[str]:
    docs = []
    for path in toc_notebooks():
        doc = path.relative_to(ROOT).with_suffix("").as_posix()
        if any(ex.checks for ex in read_chapter(doc).exercises):
            docs.append(doc)
    return docs


def build(docs: list[str] | None = None, out: Path = OUT, *, run_tests: bool = True) -> dict[str, Path]:
    """Write and ``otter assign`` the assignment of every chapter in ``docs`` into ``out/<name>``;
    returns the folder of each (``dist/student``, ``dist/autograder``)."""
    otter = Path(sys.executable).parent / "otter"
    if not otter.exists():
        raise AssignmentError(f"{otter} is missing: install the `assignments` extra (pip install -e '.[assignments]')")
    built = {}
    for doc in docs or chapters_with_checks():
        name = Path(doc).name
        folder = Path(out) / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        master = folder / f"{name}.ipynb"
        master.write_text(json.dumps(master_notebook(doc), indent=1, ensure_ascii=False) + "\n")
        cmd = [str(otter), "assign", "--no-pdfs", *([] if run_tests else ["--no-run-tests"]), master.name, "dist"]
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssignmentError(f"otter assign failed on {doc}:\n{(proc.stdout + proc.stderr)[-4000:]}")
        built[doc] = folder / "dist"
    return built


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", action="append", help="a chapter's name (e.g. admm); default: every chapter")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--no-run-tests", action="store_true", help="do not run the solutions against the tests")
    args = parser.parse_args(argv)
    docs = [f"book/{c}" for c in args.chapter] if args.chapter else None
    built = build(docs, args.out, run_tests=not args.no_run_tests)
    for doc, dist in built.items():
        grader = next((dist / "autograder").glob("*.zip"))
        print(f"{doc}: {dist / 'student'} (hand out), {grader} (grade)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
