"""Paper claims and the book's verdicts on them, decided by paired confidence intervals.

A chapter that tests a claim of its paper records it once, from its executed run, with one number
per seed for every quantity the claim compares (the runs of a record share one list of seeds and
are paired by it)::

    book.claims.record(
        "huang2019.dp_admm_beats_baselines", chapter="huang2019", paper="Huang et al. 2019",
        claim="DP-ADMM beats DP-SGD", where="Sec. 'All methods against ε'",
        seeds=[0, 1, 2],
        samples={"DP-ADMM test error, ε = 0.3": [0.236, 0.238, 0.235],
                 "DP-SGD test error, ε = 0.3": [0.2432, 0.2432, 0.2432]},
        tests={"ε = 0.3: DP-ADMM beats DP-SGD":
               book.claims.compare("DP-ADMM test error, ε = 0.3", "<", "DP-SGD test error, ε = 0.3")},
        trivial={"DP-SGD test error, ε = 0.3": 0.2432, "DP-ADMM test error, ε = 0.3": 0.2432},
        better="lower",
    )

Each comparison is decided by a 95 % Student-t interval (:data:`CONFIDENCE`) on the mean of its
paired per-seed differences (:func:`compare`), or on the mean log-ratio for a claim about a factor
(:func:`ratio`): an interval entirely on the claimed side → the comparison **holds**, entirely on
the other side → it **does not hold**, straddling → **inconclusive**. A comparison whose sides are
both no better than the trivial model (``trivial``: the zero model's objective, the majority
class's error) is **trivial** and decides nothing. The claim's verdict (:func:`verdict_rule`):

* **does not hold here** — some non-trivial comparison does not hold;
* **holds** — every comparison holds, and none is trivial;
* **at the trivial model** — every comparison is trivial;
* **inconclusive** — anything else (no comparison against the claim, but not all for it);
* **not testable at this setting** (:data:`NOT_TESTABLE`) — a precondition failed (:func:`learns`,
  :func:`given`): some method does not learn in the noise-free limit at the setting it runs, or was
  not run long enough. Its comparisons are still computed and shown, but decide nothing.

One orientation everywhere: ``compare(lhs, op, rhs)`` reads "lhs is better than rhs" (``"<"`` when
lower is better), and every effect — in a chapter (:func:`describe`) and in the table alike — is
"lhs better than rhs by x <unit>", positive when the data point the claimed way.

Verdicts are never typed: :func:`record` computes them, stores the numbers they follow from and
returns the verdict (a chapter quotes it with ``glue``); :func:`problems` recomputes them from a
stored record. :func:`load` reads records of one form only (:data:`FORMAT`, the one :func:`record`
writes) and refuses any other.

:data:`EXPECTED` lists the claims of the five papers the book must test; :func:`table` turns the
records into the reproducibility table (an expected claim with no record shows as
:data:`NOT_TESTED`), :func:`evidence` into one row per comparison, and :func:`evidence_chart`
into a forest plot (each comparison's estimate with its interval).

The package keeps one job a module: ``_stats`` (intervals, outcomes, the verdict rule), ``_preconditions``
(:func:`learns`, :func:`given`), ``_records`` (writing, reading and checking the JSON records),
``_prose`` (the sentences of :func:`evidence` and :func:`describe`), ``_table`` (the tables) and ``_chart``
(the forest plot); ``_format`` writes their numbers.
"""

from __future__ import annotations

from ._chart import STATUS_COLOURS, evidence_chart
from ._preconditions import Precondition, check_preconditions, given, learns
from ._prose import SPLIT_RULE, check_quote, describe, evidence, quote_problems
from ._records import (BOOK_QUESTIONS, FORMAT, MIN_SEEDS, MIN_SEEDS_FULL, load, problems, record, results_dir,
                       samples_from)
from ._stats import (CONFIDENCE, NOT_TESTABLE, OUTCOMES, VERDICTS, Comparison, compare, evaluate, paired_interval, ratio,
                     verdict_rule)
from ._table import EXPECTED, NOT_TESTED, comparison_table, table

__all__ = ["CONFIDENCE", "MIN_SEEDS", "MIN_SEEDS_FULL", "VERDICTS", "OUTCOMES", "FORMAT", "NOT_TESTED", "NOT_TESTABLE",
           "EXPECTED", "BOOK_QUESTIONS", "Comparison", "compare", "ratio",
           "paired_interval", "evaluate", "comparison_table", "verdict_rule", "Precondition", "learns", "given",
           "check_preconditions", "record", "samples_from", "load", "results_dir", "problems", "evidence",
           "describe", "check_quote", "quote_problems", "table", "evidence_chart", "STATUS_COLOURS", "SPLIT_RULE"]
