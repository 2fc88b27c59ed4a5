"""The suite in three lanes: every test file of ``tests/`` is in exactly one (tests/test_layout.py checks it).

``make test-lib``, ``make test-contracts`` and ``make test-book`` run one lane each (``pytest --lane NAME``,
which tests/conftest.py reads); ``make test`` runs the whole suite once, the three lanes together.

* ``lib`` — the library's own tests, module by module and paper by paper: problems, data sets, topologies,
  mechanisms, smoothing, the work counter, the accountant's root-finds, each paper's algorithms against slow
  references written from the paper, and the layout of the code. No book build, no browser, no JupyterLab,
  no Lite, no notebook executed (none of :data:`BOOK_FIXTURES`), and only the basic install. It is the lane a
  change of the library runs first, so a long statistical or generic check goes to the contracts.
* ``contracts`` — what every algorithm and every privacy claim must keep, checked over the whole registry or
  against a computation independent of the library: the run contract and bad input for every registered
  algorithm (``tests/algorithm_cases.py``), the privacy harness (``tests/privacy_harness.py``: noise drawn =
  noise claimed, sensitivity claimed ≥ measured, the empirical audit), record swap, the budget (of a run, of
  tuning and of what a result releases), the papers' formulas derived anew, and the accountants against
  dp-accounting, closed forms and numerical integration.
* ``book`` — the book and its instruments: everything that builds or reads the book (the fast build, the
  site, Lite, the live panels, JupyterLab, build faults and reuse, publishing, assignments, the classroom
  edition, reading and names), and the book's instruments that the chapters run on, apart from the science
  (the sweep and its cache, the Dask cluster, charts, widgets, the live panels, the arena).
"""

from __future__ import annotations

#: Test file names (in ``tests/``) of each lane.
LANES: dict[str, tuple[str, ...]] = {
    "lib": (
        "test_accounting_gdp.py",
        "test_chen_lee.py",
        "test_comments.py",
        "test_cyffers.py",
        "test_datasets.py",
        "test_docstrings.py",
        "test_graph.py",
        "test_huang_baseline.py",
        "test_layout.py",
        "test_linearized.py",
        "test_liu.py",
        "test_mechanisms.py",
        "test_network.py",
        "test_problems.py",
        "test_smoothing.py",
        "test_star.py",
        "test_topology.py",
        "test_work.py",
    ),
    "contracts": (
        "test_accounting.py",
        "test_arena_selection.py",
        "test_bad_input.py",
        "test_budget_contract.py",
        "test_contract.py",
        "test_estimators.py",
        "test_federated_privacy.py",
        "test_paper_formulas.py",
        "test_pld.py",
        "test_privacy_audit.py",
        "test_privacy_noise.py",
        "test_privacy_sensitivity.py",
        "test_record_swap.py",
        "test_release.py",
        "test_replace_one.py",
        "test_signatures.py",
        "test_tuning.py",
        "test_wheel.py",
    ),
    "book": (
        "test_arena.py",
        "test_assignments.py",
        "test_build_faults.py",
        "test_build_progress.py",
        "test_build_reuse.py",
        "test_claims.py",
        "test_classroom.py",
        "test_csp.py",
        "test_dask_cluster.py",
        "test_lab.py",
        "test_landing.py",
        "test_lite.py",
        "test_live.py",
        "test_live_cyffers_arena.py",
        "test_live_wasm_paths.py",
        "test_live_xu_liu.py",
        "test_live_zhang.py",
        "test_pipeline.py",
        "test_publish.py",
        "test_reader_names.py",
        "test_reading.py",
        "test_site.py",
        "test_sweep.py",
        "test_sweep_and_charts.py",
        "test_sweep_stale.py",
        "test_viz_curves.py",
        "test_widgets.py",
    ),
}

#: The fixtures of tests/conftest.py that build the book, serve it or start a browser: the ``lib`` lane uses none.
BOOK_FIXTURES = ("fast_build", "site_dir", "server", "browser")
