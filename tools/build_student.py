"""`make student`: the student edition of the book (no solutions), from what `make book` executed.

    python tools/build_student.py               # what `make student` runs (full mode)
    python tools/build_student.py --mode fast   # from the test build's staging copy

The student edition lives in the package ``tools/bookbuild/`` (:mod:`bookbuild.student`, which
reads :mod:`bookbuild.solutions`); the instructor notes the book build writes are
:mod:`bookbuild.instructor`, from :mod:`bookbuild.chapters`. This script is the command line, and
keeps the names the tests import from ``build_student``.
"""

from __future__ import annotations

import sys

from bookbuild.chapters import NOT_CHAPTERS, Chapter, Exercise, prerequisites, problems, read_book, read_chapter
from bookbuild.instructor import (INSTRUCTOR_DOC, INSTRUCTOR_PART, answer_table, check_function,
                                  instructor_notes, mistake_messages, write_instructor_notes)
from bookbuild.myst import Directive, directives
from bookbuild.myst import cell_source as _source  # its old name: tests/test_classroom.py reads cells with it
from bookbuild.solutions import Solution, strip_markdown, strip_notebook
from bookbuild.student import (STUDENT, StudentBuild, build, main, make_student_stage, stale_reasons,
                               write_student_notebooks)

#: The names this script had before the build moved into tools/bookbuild/ (the tests import them from here).
__all__ = ["NOT_CHAPTERS", "Chapter", "Exercise", "prerequisites", "problems", "read_book", "read_chapter",
           "INSTRUCTOR_DOC", "INSTRUCTOR_PART", "answer_table", "check_function", "instructor_notes",
           "mistake_messages", "write_instructor_notes", "Directive", "directives", "_source", "Solution",
           "strip_markdown", "strip_notebook", "STUDENT", "StudentBuild", "build", "make_student_stage",
           "stale_reasons", "write_student_notebooks"]

if __name__ == "__main__":
    sys.exit(main())
