"""`make book`: execute every notebook with papermill, then run Jupyter Book on the result.

    python tools/build_book.py --mode full                      # what `make book` runs: _build/html
    python tools/build_book.py --mode fast --out _build/test    # what the test suite runs

The build lives in the package ``tools/bookbuild/`` (:mod:`bookbuild.book`, which reads
:mod:`bookbuild.stage` and :mod:`bookbuild.site`); this script is its command line, and keeps the
names the tests and ``tests/conftest.py`` import from ``build_book``.
"""

from __future__ import annotations

import sys

from bookbuild.book import BuildResult, build, main
from bookbuild.site import build_site
from bookbuild.stage import (CELL_TIMEOUT, KERNEL_START_TIMEOUT, WIDGET_MIME, NotebookRun,
                             execute_notebook, execution_stage, results_dir, stage_sources, vendor_javascript)
from bookbuild.toc import BUILD, HTML, ROOT, STAGE, TEST_OUT, toc_files, toc_notebooks

#: The names this script had before the build moved into tools/bookbuild/ (tests/conftest.py and the tests
#: import them from here).
__all__ = ["BuildResult", "build", "build_site", "CELL_TIMEOUT", "KERNEL_START_TIMEOUT", "WIDGET_MIME",
           "NotebookRun", "execute_notebook", "execution_stage", "results_dir", "stage_sources",
           "vendor_javascript", "BUILD", "HTML", "ROOT", "STAGE", "TEST_OUT", "toc_files", "toc_notebooks"]

if __name__ == "__main__":
    sys.exit(main())
