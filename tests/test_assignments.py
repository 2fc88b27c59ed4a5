"""`make assignments` (tools/assignments.py): otter-grader assignments from the chapters' exercises
and checks, graded by otter-grader's own run (``otter run``) on a correct and a wrong submission."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import assignments
from bookbuild.chapters import read_chapter

ROOT = Path(__file__).resolve().parents[1]
OTTER = Path(sys.executable).parent / "otter"


@pytest.fixture(scope="module")
def admm(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("assignments")
    # the solutions run against the tests in `otter run` below: no second run inside `otter assign`
    return assignments.build(["book/admm"], out, run_tests=False)["book/admm"]


def _code(nb: dict) -> list[str]:
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


def _grade(dist: Path, submission: Path, out: Path) -> dict:
    out.mkdir()
    zip_path = next((dist / "autograder").glob("*.zip"))
    subprocess.run([str(OTTER), "run", "-a", str(zip_path), "-o", str(out), str(submission)], check=True,
                   capture_output=True, text=True, cwd=out)
    tests = json.loads((out / "results.json").read_text())["tests"]
    return {t["name"]: t for t in tests}


def test_every_checked_exercise_becomes_a_question_with_the_chapters_own_words():
    chapter = read_chapter("book/admm")
    master = assignments.master_notebook("book/admm")
    questions = [c for c in master["cells"] if c["cell_type"] == "raw" and c["source"].startswith("# BEGIN QUESTION")]
    checked = [e for e in chapter.exercises if e.checks]
    assert len(questions) == sum(len(e.checks) for e in checked) >= 3
    text = "\n".join("".join(c["source"]) for c in master["cells"])
    for number, exercise in enumerate(checked, 1):
        assert exercise.text.strip()[:80] in text  # the exercise as the chapter asks it
        solution = assignments.solution_code(exercise.solution, exercise.label)
        assert assignments._renamed(solution, "answer", f"answer_{number}") in text  # the chapter's solution
    assert "myst_nb" not in text and "exercise_answers" not in text
    assert assignments.chapters_with_checks()  # every chapter with checks gets an assignment


def test_the_student_notebook_has_no_solution_and_no_hidden_case(admm):
    student = json.loads((admm / "student" / "admm.ipynb").read_text())
    code = "\n".join(_code(student))
    for exercise in read_chapter("book/admm").exercises:
        if exercise.checks:
            solution = assignments.solution_code(exercise.solution, exercise.label)
            assert solution.split("=", 1)[-1].strip() not in code, f"the student notebook shows {exercise.label}'s solution"
    assert "answer_1 = ..." in code and "ex.check_y_update(answer_1)" in code
    tests = student["metadata"]["otter"]["tests"]
    assert set(tests) == {"q1", "q2", "q3"}
    assert not [case for t in tests.values() for s in t["suites"] for case in s["cases"] if case["hidden"]]
    with zipfile.ZipFile(next((admm / "autograder").glob("*.zip"))) as z:
        q1 = z.read("tests/q1.py").decode()
    assert "'hidden': True" in q1 and "check_y_update" in q1  # the grader has the hidden case too


def test_otter_grades_a_correct_and_a_wrong_submission(admm, tmp_path):
    correct = _grade(admm, admm / "autograder" / "admm.ipynb", tmp_path / "correct")
    assert {q: correct[q]["score"] for q in ("q1", "q2", "q3")} == {"q1": 1.0, "q2": 1.0, "q3": 1.0}
    student = json.loads((admm / "student" / "admm.ipynb").read_text())
    for cell in student["cells"]:  # a typical mistake in q1, q2 and q3 left unanswered
        source = "".join(cell["source"])
        if "answer_1 = ..." in source:
            cell["source"] = source.replace("answer_1 = ...", "answer_1 = x + u  #")
    wrong_path = tmp_path / "admm.ipynb"
    wrong_path.write_text(json.dumps(student))
    wrong = _grade(admm, wrong_path, tmp_path / "wrong")
    assert {q: wrong[q]["score"] for q in ("q1", "q2", "q3")} == {"q1": 0.0, "q2": 0.0, "q3": 0.0}
    # the student sees why: the check's own words, its hint naming the mistake
    public = wrong["Public Tests"]["output"]
    assert "you returned x + u unchanged" in public and "Hint:" in public
    assert "not answered yet" in public
