"""A tiny book notebook for the build tests (tests/test_build_reuse.py, tests/test_build_faults.py)."""

from __future__ import annotations

import json


def notebook(source: str, execution_stage: int = 0) -> str:
    """A notebook's JSON: a ``parameters`` cell (``FAST = True``), then one code cell of ``source``."""
    cells = [{"cell_type": "code", "id": "p", "metadata": {"tags": ["parameters"]}, "source": "FAST = True",
              "outputs": [], "execution_count": None},
             {"cell_type": "code", "id": "c", "metadata": {}, "outputs": [], "execution_count": None,
              "source": source}]
    return json.dumps({"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                       "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                                    "dpadmm": {"execution_stage": execution_stage}}})
