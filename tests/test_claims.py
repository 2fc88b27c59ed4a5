"""The claims record: verdicts follow from per-seed numbers through paired intervals, never from a
typed word; a record of any other form is refused."""

from __future__ import annotations

import json
import math

import build_book
import numpy as np
import pytest
from scipy import stats

from dpadmm_book import claims

SEEDS = list(range(10))


@pytest.fixture()
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("DPADMM_RESULTS_DIR", str(tmp_path))
    return tmp_path


def _stored(results, claim_id) -> dict:
    return json.loads((results / f"{claim_id}.json").read_text())


def _new(claim_id, samples, tests, seeds=SEEDS, **extra):
    return claims.record(claim_id, chapter=claim_id.split(".")[0], paper="P", claim=f"claim {claim_id}", where="s",
                         seeds=seeds, samples=samples, tests=tests, **extra)


# ---------------------------------------------------------------------- the interval math
def test_paired_interval_is_scipys_t_interval_on_the_differences():
    rng = np.random.default_rng(7)
    a, b = rng.normal(1.0, 0.3, 8), rng.normal(0.8, 0.3, 8)
    d = a - b
    want = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    mean, low, high = claims.paired_interval(a, b)
    assert mean == pytest.approx(d.mean(), rel=1e-12)
    assert (low, high) == pytest.approx(want, rel=1e-12)
    # the same as scipy's paired t-test's own interval
    ci = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    # against a number: one-sample (scipy's interval is for the mean of a, ours for a − 0.9)
    ci1 = stats.ttest_1samp(a, 0.9).confidence_interval(0.95)
    assert claims.paired_interval(a, 0.9)[1:] == pytest.approx((ci1.low - 0.9, ci1.high - 0.9), rel=1e-12)


def test_ratio_interval_is_the_t_interval_of_the_log_ratios_as_factors():
    rng = np.random.default_rng(3)
    slow = rng.uniform(1.0, 1.4, 6)
    fast = slow / rng.uniform(9.0, 12.0, 6)
    logs = np.log(slow) - np.log(fast)
    low, high = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
    assert claims.paired_interval(slow, fast, log=True) == pytest.approx(
        (math.exp(logs.mean()), math.exp(low), math.exp(high)), rel=1e-12)
    with pytest.raises(ValueError, match="positive"):
        claims.paired_interval(slow, -fast, log=True)


def test_known_small_sample_by_hand():
    """d = (1, 2, 3): mean 2, sd 1, t_{0.975, 2} = 4.302653: interval 2 ± 4.302653 / √3."""
    half = 4.302652729749464 / math.sqrt(3)
    assert claims.paired_interval([2.0, 4.0, 6.0], [1.0, 2.0, 3.0]) == pytest.approx((2.0, 2 - half, 2 + half))


# ---------------------------------------------------------------------- each verdict path
def test_holds_when_every_interval_is_on_the_claimed_side(results):
    a = [0.20, 0.21, 0.19, 0.20, 0.22, 0.20, 0.21, 0.19, 0.20, 0.21]
    b = [x + 0.03 + 0.002 * (i % 3) for i, x in enumerate(a)]
    verdict = _new("t.holds", {"A test error": a, "B test error": b},
                   {"A beats B": claims.compare("A test error", "<", "B test error")})
    assert verdict == "holds"
    entry = _stored(results, "t.holds")
    c = entry["comparisons"]["A beats B"]
    assert c["outcome"] == "holds" and not c["trivial"] and c["high"] < 0
    assert entry["seeds"] == SEEDS and entry["samples"]["A test error"] == a


def test_one_reversed_comparison_means_it_does_not_hold(results):
    base = np.linspace(0.5, 0.6, 10)
    samples = {"ν = 0 gap, ε = 0.1": base, "ν = 2 gap, ε = 0.1": base * 0.8,
               "ν = 0 gap, ε = 1": base, "ν = 2 gap, ε = 1": base * 1.05 + 0.001 * np.arange(10)}
    tests = {f"ε = {e}: ν = 2 lower": claims.ratio(f"ν = 2 gap, ε = {e}", f"ν = 0 gap, ε = {e}", below=1)
             for e in ("0.1", "1")}
    assert _new("t.mixed", samples, tests) == "does not hold here"
    outcomes = {k: v["outcome"] for k, v in _stored(results, "t.mixed")["comparisons"].items()}
    assert outcomes == {"ε = 0.1: ν = 2 lower": "holds", "ε = 1: ν = 2 lower": "does not hold"}


def test_straddling_interval_is_inconclusive(results):
    rng = np.random.default_rng(0)
    a = rng.normal(0.3, 0.02, 10)
    b = a + rng.normal(0.0, 0.02, 10)
    assert _new("t.noise", {"A error": a, "B error": b}, {"A beats B": ("A error", "<", "B error")}) == "inconclusive"
    c = _stored(results, "t.noise")["comparisons"]["A beats B"]
    assert c["low"] < 0 < c["high"] and c["outcome"] == "inconclusive"


def test_a_trivial_comparison_cannot_make_a_claim_hold(results):
    """Cyffers' high-privacy case: DP-SGD at the zero model's objective, ADMM worse than it."""
    zero = 0.0399
    sgd = [zero, zero + 1e-4, zero - 1e-4]
    admm = [0.0490, 0.0485, 0.0495]
    samples = {"ADMM test objective": admm, "DP-SGD test objective": sgd}
    trivial = {"ADMM test objective": zero, "DP-SGD test objective": zero}
    tests = {"DP-SGD below ADMM": claims.compare("DP-SGD test objective", "<", "ADMM test objective")}
    # the interval alone says it holds ...
    assert _new("t.nontrivial", samples, tests, seeds=[0, 1, 2]) == "holds"
    # ... but both sides are no better than the zero model: trivial, so it cannot hold
    assert _new("t.trivial", samples, tests, seeds=[0, 1, 2], trivial=trivial, better="lower") == "at the trivial model"
    c = _stored(results, "t.trivial")["comparisons"]["DP-SGD below ADMM"]
    assert c["outcome"] == "holds" and c["trivial"] and c["at_trivial"] == [True, True]
    # a trivial comparison next to one that holds: not "holds"
    samples["DP-SGD objective, ε = 10"] = [0.0100, 0.0110, 0.0105]
    trivial["DP-SGD objective, ε = 10"] = zero
    tests["DP-SGD learns at ε = 10"] = claims.compare("DP-SGD objective, ε = 10", "<", "DP-SGD test objective")
    assert _new("t.partly", samples, tests, seeds=[0, 1, 2], trivial=trivial, better="lower") == "inconclusive"
    # one side better than the trivial model: the comparison counts
    learns = {"A accuracy": [0.80, 0.81, 0.82], "majority accuracy": [0.7568] * 3}
    assert _new("t.learns", learns, {"A beats B": ("A accuracy", ">", "majority accuracy")}, seeds=[0, 1, 2],
                trivial={"A accuracy": 0.7568, "majority accuracy": 0.7568}, better="higher") == "holds"


def test_better_decides_which_side_of_the_trivial_value_counts(results):
    """An accuracy far above the majority class is not trivial, unless the record says lower is better."""
    samples = {"A accuracy": [0.85, 0.86, 0.87], "B accuracy": [0.80, 0.81, 0.82]}
    trivial = {"A accuracy": 0.7568, "B accuracy": 0.7568}
    tests = {"A beats B": ("A accuracy", ">", "B accuracy")}
    assert _new("t.hi", samples, tests, seeds=[0, 1, 2], trivial=trivial, better="higher") == "holds"
    assert _new("t.lo", samples, tests, seeds=[0, 1, 2], trivial=trivial, better="lower") == "at the trivial model"


def test_ratio_within_and_above_the_papers_range(results):
    rng = np.random.default_rng(5)
    exact = rng.uniform(1.0, 1.2, 10)
    ours = exact / rng.uniform(10.5, 11.5, 10)
    samples = {"exact-update ADMM, s per iteration": exact, "DP-ADMM, s per iteration": ours}
    e, d = samples
    assert _new("t.within", samples, {"within 9.7–12.9×": claims.ratio(e, d, within=(9.7, 12.9))},
                paper_value="9.7–12.9× (Table II)") == "holds"
    assert _new("t.above", samples, {"above 12.9×": claims.ratio(e, d, above=12.9)}) == "does not hold here"
    assert _new("t.miss", samples, {"within 2–5×": claims.ratio(e, d, within=(2, 5))}) == "does not hold here"
    assert _new("t.edge", samples, {"within 9.7–11×": claims.ratio(e, d, within=(9.7, 11.0))}) == "inconclusive"
    row = claims.table(expected={}).loc["t.within"]
    assert row["verdict"] == "holds" and "paper: 9.7–12.9× (Table II)" in row["effect"] and "×" in row["effect"]


def test_verdict_rule_on_its_own():
    h, n, i = ({"outcome": o, "trivial": False} for o in ("holds", "does not hold", "inconclusive"))
    t = {"outcome": "does not hold", "trivial": True}
    rule = claims.verdict_rule
    assert rule({"a": h, "b": h}) == "holds"
    assert rule({"a": h, "b": n}) == "does not hold here"  # one reversed comparison is enough
    assert rule({"a": h, "b": i}) == "inconclusive"
    assert rule({"a": h, "b": t}) == "inconclusive"  # a trivial comparison cannot make it hold ...
    assert rule({"a": t}) == "at the trivial model"  # ... nor make it fail
    assert rule({"a": t, "b": n}) == "does not hold here"


def test_record_rejects_bad_input(results):
    ok = {"A error": [0.1, 0.2, 0.3], "B error": [0.2, 0.3, 0.4]}
    test = {"x": ("A error", "<", "B error")}
    with pytest.raises(ValueError, match="claim_id"):
        _new("bad id", ok, test, seeds=[0, 1, 2])
    with pytest.raises(ValueError, match="at least 3"):
        _new("t.k", {k: v[:2] for k, v in ok.items()}, test, seeds=[0, 1])
    with pytest.raises(ValueError, match="one value per seed"):
        _new("t.k", ok, test, seeds=[0, 1, 2, 3])
    with pytest.raises(ValueError, match="distinct"):
        _new("t.k", ok, test, seeds=[0, 0, 1])
    with pytest.raises(ValueError, match="not a key"):
        _new("t.k", ok, {"x": ("C error", "<", "B error")}, seeds=[0, 1, 2])
    with pytest.raises(ValueError, match="finite"):
        _new("t.k", {**ok, "A error": [0.1, float("nan"), 0.3]}, test, seeds=[0, 1, 2])
    with pytest.raises(ValueError, match="op"):
        claims.compare("A error", ">=", "B error")
    with pytest.raises(ValueError, match="exactly one"):
        claims.ratio("A error", "B error", above=2, within=(1, 3))
    with pytest.raises(ValueError, match="within"):
        claims.ratio("A error", "B error", within=(3, 1))
    with pytest.raises(ValueError, match="better"):
        _new("t.k", ok, test, seeds=[0, 1, 2], trivial={"A error": 0.24})
    with pytest.raises(ValueError, match="not samples"):
        _new("t.k", ok, test, seeds=[0, 1, 2], trivial={"C error": 0.24}, better="lower")
    with pytest.raises(ValueError, match="variable names"):  # the page must not show admm_eps0
        _new("t.k", {"admm_eps0": ok["A error"], "B error": ok["B error"]}, {"x": ("admm_eps0", "<", "B error")},
             seeds=[0, 1, 2])
    # a label makes an internal key readable
    assert _new("t.k", {"admm_eps0": ok["A error"], "B error": ok["B error"]}, {"x": ("admm_eps0", "<", "B error")},
                seeds=[0, 1, 2], labels={"admm_eps0": "ADMM test error, ε = 0.1"}) == "holds"
    assert _stored(results, "t.k")["labels"]["admm_eps0"] == "ADMM test error, ε = 0.1"


def test_samples_from_pairs_runs_by_seed():
    import pandas as pd

    runs = pd.DataFrame({"seed": [2, 0, 1, 0, 1, 2], "method": ["A"] * 3 + ["B"] * 3,
                         "epsilon": [0.1] * 6, "test error": [0.32, 0.30, 0.31, 0.40, 0.41, 0.42]})
    seeds, samples = claims.samples_from(runs, "test error", by=["method", "epsilon"],
                                         label="{method} test error, ε = {epsilon:g}")
    assert seeds == [0, 1, 2]
    assert samples == {"A test error, ε = 0.1": [0.30, 0.31, 0.32], "B test error, ε = 0.1": [0.40, 0.41, 0.42]}
    with pytest.raises(ValueError, match="same seeds"):
        claims.samples_from(runs.iloc[1:], "test error", by="method", label="{method}")
    with pytest.raises(ValueError, match="several rows"):
        claims.samples_from(pd.concat([runs, runs.iloc[:1]]), "test error", by="method", label="{method}")


# ---------------------------------------------------------------------- problems() recomputes
def test_problems_catches_a_typed_verdict_and_tampered_numbers(results):
    a = [0.20, 0.21, 0.19, 0.20, 0.22, 0.20, 0.21, 0.19, 0.20, 0.21]
    b = [x + 0.03 for x in a]
    _new("t.ok", {"A error": a, "B error": b}, {"A beats B": ("A error", "<", "B error")})
    entry = _stored(results, "t.ok")
    assert claims.problems(entry) == []
    typed = json.loads(json.dumps(entry))
    typed["verdict"] = "does not hold here"  # typed by hand over the computed one
    assert any("give 'holds'" in p for p in claims.problems(typed))
    edited = json.loads(json.dumps(entry))
    edited["samples"]["A error"][0] = 0.9  # one seed's number edited after the run
    assert any("comparison 'A beats B' is stored as" in p for p in claims.problems(edited))
    interval = json.loads(json.dumps(entry))
    interval["comparisons"]["A beats B"]["low"] = -0.5  # a widened interval
    assert any("stored as" in p for p in claims.problems(interval))
    unknown = json.loads(json.dumps(entry))
    unknown["verdict"] = "holds partly"  # a word the verdict rule never gives
    assert any("not one of" in p for p in claims.problems(unknown))
    assert any("10 distinct seeds" in p for p in claims.problems(entry, min_seeds=claims.MIN_SEEDS_FULL + 1))
    assert "missing" in claims.problems({"id": "x", "format": claims.FORMAT, "samples": {}})[0]
    asked = json.loads(json.dumps(entry))
    asked["question"] = "mine"  # the table could not place it in either section
    assert any("question 'mine'" in p for p in claims.problems(asked))
    broken = json.loads(json.dumps(entry))
    broken["tests"] = {"bad": {"kind": "difference", "lhs": "nope", "op": ">", "rhs": 1}}
    assert any("cannot be evaluated" in p for p in claims.problems(broken))


def test_problems_flags_an_unlabelled_internal_key(results):
    _new("t.lab", {"admm_eps0": [1.0, 2.0, 3.0], "B": [2.0, 3.0, 4.5]}, {"x": ("admm_eps0", "<", "B")},
         seeds=[0, 1, 2], labels={"admm_eps0": "ADMM objective"})
    entry = _stored(results, "t.lab")
    assert claims.problems(entry) == []
    entry["labels"]["admm_eps0"] = "admm_eps0"
    assert any("variable names" in p for p in claims.problems(entry))


# ---------------------------------------------------------------------- the reproducibility table
def test_table_lists_every_expected_claim_and_every_record(results):
    expected = {"xu2020.threshold": ("Xu et al. 2020", "A beats B above a threshold"),
                "huang2019.agents": ("Huang et al. 2019", "more agents, less accuracy")}
    lo, hi = [1.0, 1.1, 0.9], [-1.0, -1.1, -0.9]
    claims.record("xu2020.threshold", chapter="xu2020", paper="Xu et al. 2020", claim="A beats B above a threshold",
                  where="s", seeds=[0, 1, 2], samples={"gap at small ε": lo, "gap at large ε": hi},
                  tests={"worse at small ε": claims.compare("gap at small ε", ">", 0),
                         "better at large ε": claims.compare("gap at large ε", ">", 0)}, note="n")
    _new("zhang2017.found", {"x": [1.0, 2.0, 3.0]}, {"x above 0": claims.compare("x", ">", 0)}, seeds=[0, 1, 2])
    bad = _stored(results, "zhang2017.found")
    bad["verdict"] = "does not hold here"
    (results / "zhang2017.found.json").write_text(json.dumps(bad))
    table = claims.table(expected=expected)
    assert list(table.index) == ["xu2020.threshold", "huang2019.agents", "zhang2017.found"]  # paper order
    row = table.loc["xu2020.threshold"]
    assert row["verdict"] == "does not hold here"
    # the comparison against the claim, in the one orientation (negative: the data point the other way)
    assert row["effect"].startswith("better at large ε: gap at large ε better than 0 by −1.00 (95 % CI")
    assert row["tally"] == "1 of 2 comparisons hold, 1 reverses" and row["seeds"] == 3
    assert table.loc["huang2019.agents", "verdict"] == claims.NOT_TESTED
    assert table.loc["huang2019.agents", "claim"] == "more agents, less accuracy"
    assert table.loc["zhang2017.found", "verdict"] == "inconsistent record"
    assert not table.loc["zhang2017.found", "listed"] and table.loc["xu2020.threshold", "listed"]
    # the published build asks for ten seeds
    assert claims.table(expected=expected, min_seeds=10).loc["xu2020.threshold", "verdict"] == "inconsistent record"


def test_evidence_turns_each_difference_to_the_claimed_direction(results):
    _new("t.dir", {"A error": [0.20, 0.21, 0.22], "B error": [0.25, 0.27, 0.26], "A acc": [0.8, 0.79, 0.78],
                   "B acc": [0.75, 0.73, 0.74]},
         {"A lower error": ("A error", "<", "B error"), "A higher accuracy": ("A acc", ">", "B acc")}, seeds=[0, 1, 2])
    ev = claims.evidence(_stored(results, "t.dir")).set_index("comparison")
    assert ev.loc["A lower error", "effect"] == pytest.approx(0.05)  # B − A: positive = as claimed
    assert ev.loc["A lower error", "low"] > 0 and ev.loc["A higher accuracy", "low"] > 0
    assert ev.loc["A lower error", "compares"] == "B error − A error, claimed > 0"
    assert list(ev["status"]) == ["holds", "holds"]


def test_evidence_chart_is_a_forest_plot_of_every_comparison(results):
    rng = np.random.default_rng(2)
    exact = rng.uniform(1.0, 1.2, 3)
    _new("t.chart", {"A error": [0.20, 0.21, 0.22], "B error": [0.25, 0.27, 0.26], "exact s": exact,
                     "ours s": exact / 11, "C error": [0.2432] * 3},
         {"A beats B": ("A error", "<", "B error"), "A beats C": ("A error", "<", "C error"),
          "B beats C": ("B error", "<", "C error"),
          "paper's 9.7–12.9×": claims.ratio("exact s", "ours s", within=(9.7, 12.9))},
         seeds=[0, 1, 2], trivial={"B error": 0.2432, "C error": 0.2432}, better="lower")
    spec = claims.evidence_chart(_stored(results, "t.chart")).to_dict()
    assert len(spec["vconcat"]) == 2  # differences and factors on their own scales
    rows = [r for d in spec["datasets"].values() for r in d]
    assert {r["comparison"] for r in rows} == {"A beats B", "A beats C", "B beats C", "paper's 9.7–12.9×"}
    assert {r["comparison"]: r["status"] for r in rows}["B beats C"] == "trivial"  # greyed
    assert not any(isinstance(v, float) and math.isnan(v) for r in rows for v in r.values())
    layers = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
              for panel in spec["vconcat"] for layer in panel["layer"]]
    assert layers.count("point") == 2 and "rect" in layers  # estimates; the paper's range as a band


# ---------------------------------------------------------------------- the build
def test_reproducibility_page_runs_after_every_chapter():
    notebooks = build_book.toc_notebooks()
    stages = {p.stem: build_book.execution_stage(p) for p in notebooks}
    assert "reproducibility" in stages, "the reproducibility table must be in _toc.yml"
    others = [s for name, s in stages.items() if name != "reproducibility"]
    assert stages["reproducibility"] > max(others), "it reads the claim records: it must run last"


def test_execution_stage_is_read_from_the_metadata(tmp_path):
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps({"cells": [], "metadata": {}}))
    assert build_book.execution_stage(path) == 0
    path.write_text(json.dumps({"cells": [], "metadata": {"dpadmm": {"execution_stage": 2}}}))
    assert build_book.execution_stage(path) == 2
    path.write_text(json.dumps({"cells": [], "metadata": {"dpadmm": {"execution_stage": "last"}}}))
    with pytest.raises(ValueError, match="execution_stage"):
        build_book.execution_stage(path)


def test_expected_claims_are_listed():
    assert set(claims.EXPECTED) >= {
        "xu2020.threshold", "huang2019.agents", "huang2019.dp_admm_beats_baselines", "huang2019.eps_delta_utility",
        "huang2019.cost", "cyffers2023.admm_beats_dpsgd_high_privacy", "liu2022.smoothing_helps",
        "liu2022.vradmm_beats_sadmm", "liu2022.beats_dp_admm", "zhang2017.dvp_loss_varies_less",
        "zhang2017.accuracy_improves_with_alpha", "zhang2017.dvp_vs_pvp", "zhang2017.topology_consensus_speed"}
    for claim_id, (paper, claim) in claims.EXPECTED.items():
        assert paper and claim, claim_id


def test_a_corrupt_record_is_named(results):
    (results / "t.broken.json").write_text("{not json")
    with pytest.raises(ValueError, match="t.broken.json"):
        claims.load(results)


def test_a_record_of_another_form_is_refused(results):
    """load() and problems() read the one form record() writes: a record of means only, a record of
    another format, or one without a format is named, with what the book reads instead."""
    _new("t.ok", {"A error": ERR_A, "B error": ERR_B}, {"A beats B": claims.compare("A error", "<", "B error")},
         seeds=[0, 1, 2, 3, 4])
    entry = _stored(results, "t.ok")
    assert [e["id"] for e in claims.load(results)] == ["t.ok"] and claims.problems(entry) == []
    means = {"id": "t.means", "chapter": "t", "paper": "P", "claim": "a beats b", "where": "s",
             "measured": {"a": 0.9, "b": 0.8}, "tests": {"a>b": ["a", ">", "b"]}, "verdict": "holds", "note": ""}
    other = {**entry, "id": "t.other", "format": 2}
    for record, form in ((means, "of no format"), (other, "of format 2")):
        assert claims.problems(record) == [f"it is {form}, not {claims.FORMAT} (per-seed samples with their "
                                           "comparisons and preconditions)"]
        path = results / f"{record['id']}.json"
        path.write_text(json.dumps(record))
        with pytest.raises(ValueError, match=rf"{path.name} is {form}, not {claims.FORMAT} .*re-run the chapter"):
            claims.load(results)
        path.unlink()
    missing = {k: v for k, v in entry.items() if k != "preconditions"}
    assert claims.problems(missing) == ["missing fields ['preconditions']"]


def _glued(notebook: dict) -> dict[str, str]:
    out = {}
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if scrap:
                out[scrap["name"]] = str(output.get("data", {}).get(scrap["mime_prefix"] + "text/plain", ""))
    return out


def test_chapters_quote_the_tables_effects(fast_build):
    """Every effect a chapter glues into its prose is, word for word, one the reproducibility table
    shows: no sign flipped between chapter and table (Cyffers' +0.105 against −0.105)."""
    records = claims.load(build_book.results_dir(fast_build.stage.parent))
    wrong = []
    for path in build_book.toc_notebooks():
        executed = fast_build.stage / path.relative_to(build_book.ROOT)
        if executed.exists():
            wrong += [f"{path.stem}: {w}" for w in claims.quote_problems(_glued(json.loads(executed.read_text())), records)]
    assert not wrong, f"effects quoted in a chapter that its table does not show: {wrong}"


def test_fast_build_records_support_their_verdicts(fast_build):
    """Every verdict a chapter recorded in the test build follows from its own numbers, and every
    claim the book lists was tested by some chapter."""
    records = claims.load(build_book.results_dir(fast_build.stage.parent))
    wrong = {e["id"]: claims.problems(e) for e in records if claims.problems(e)}
    assert not wrong, f"claim records whose verdict their data do not support: {wrong}"
    missing = sorted(set(claims.EXPECTED) - {e["id"] for e in records})
    assert not missing, f"claims listed in claims.EXPECTED that no chapter recorded in the fast build: {missing}"


# ---------------------------------------------------------------------- preconditions (issue 34)
ERR_A, ERR_B = [0.20, 0.21, 0.22, 0.20, 0.21], [0.25, 0.27, 0.26, 0.25, 0.26]
MAJORITY = 0.2432


def _beats(claim_id, noise_free, **extra):
    """A claim that holds on its comparison ("A beats B"), with A's noise-free run as a precondition."""
    return _new(claim_id, {"A test error": ERR_A, "B test error": ERR_B, "A noise-free test error": noise_free},
                {"A beats B": claims.compare("A test error", "<", "B test error", names=("A", "B"))},
                seeds=[0, 1, 2, 3, 4], preconditions={
                    "A learns noise-free": claims.learns("A noise-free test error", trivial=MAJORITY, better="lower")},
                unit="test-error points", **extra)


def test_a_failed_precondition_makes_the_claim_not_testable(results):
    assert _beats("t.ok", [0.15, 0.16, 0.15, 0.14, 0.15]) == "holds"
    # planted: A's noise-free run sits at the majority class, so "A beats B" says nothing about noise
    assert _beats("t.planted", [MAJORITY, 0.2433, MAJORITY, 0.2431, MAJORITY]) == claims.NOT_TESTABLE
    stored = _stored(results, "t.planted")
    assert stored["verdict"] == claims.NOT_TESTABLE and claims.NOT_TESTABLE in claims.VERDICTS
    assert stored["comparisons"]["A beats B"]["outcome"] == "holds"  # still computed and shown ...
    pre = stored["preconditions"]["A learns noise-free"]
    assert pre["ok"] is False and "not below the trivial model's 0.2432" in pre["reason"]  # ... with the reason
    assert claims.problems(stored) == []
    d = claims.describe("t.planted")
    assert d["verdict"] == claims.NOT_TESTABLE and list(d["failed_preconditions"]) == ["A learns noise-free"]
    assert claims.describe("t.ok")["failed_preconditions"] == {}
    row = claims.table(expected={}).loc["t.planted"]
    assert row["verdict"] == claims.NOT_TESTABLE and row["preconditions"].startswith("failed: A learns noise-free")
    # a given precondition that fails does the same, and its reason is kept word for word
    reason = "A converged noise-free: relative change over the last 10 % of iterations 0.02 ≥ 1e-3"
    v = _new("t.given", {"A test error": ERR_A, "B test error": ERR_B},
             {"A beats B": claims.compare("A test error", "<", "B test error")}, seeds=[0, 1, 2, 3, 4],
             preconditions={"A converged": claims.given(False, reason)})
    assert v == claims.NOT_TESTABLE and claims.describe("t.given")["failed_preconditions"] == {"A converged": reason}
    # tampering with a stored precondition is caught
    stored["preconditions"]["A learns noise-free"]["ok"] = True
    stored["verdict"] = "holds"
    assert any("precondition" in p for p in claims.problems(stored))


def test_learns_decides_by_the_interval_not_the_mean(results):
    # mean below the majority class but the interval straddles it: does not learn
    wide = [0.10, 0.40, 0.12, 0.38, 0.15]
    assert np.mean(wide) < MAJORITY
    checked = claims.check_preconditions({"p": claims.learns("x", trivial=MAJORITY, better="lower")}, {"x": wide})
    assert checked["p"]["ok"] is False
    tight = [0.240, 0.241, 0.240, 0.241, 0.240]  # barely, but by the interval
    assert claims.check_preconditions({"p": claims.learns("x", trivial=MAJORITY, better="lower")},
                                      {"x": tight})["p"]["ok"] is True
    # "higher" is better for accuracy
    acc = [0.80, 0.81, 0.82]
    assert claims.check_preconditions({"p": claims.learns("x", trivial=0.757, better="higher")}, {"x": acc})["p"]["ok"]
    assert not claims.check_preconditions({"p": claims.learns("x", trivial=0.757, better="lower")}, {"x": acc})["p"]["ok"]
    with pytest.raises(ValueError, match="better"):
        claims.learns("x", trivial=0.5, better="up")
    with pytest.raises(ValueError, match="not a key of samples"):
        claims.check_preconditions({"p": claims.learns("y", trivial=0.5, better="lower")}, {"x": acc})
    with pytest.raises(TypeError, match="ok must be a bool"):
        claims.given("yes", "why")
    with pytest.raises(ValueError, match="question"):
        _beats("t.q", [0.15] * 5, question="mine")


def test_one_orientation_in_chapter_and_table(results):
    """"A better than B by x", positive when the data point the claimed way, whichever way the
    metric improves and whichever side the chapter writes first; describe() and the table give the
    same string."""
    _new("t.err", {"A error": ERR_A, "B error": ERR_B},
         {"A beats B": claims.compare("A error", "<", "B error", names=("A", "B"))}, seeds=[0, 1, 2, 3, 4],
         unit="test-error points")
    _new("t.acc", {"A acc": [1 - e for e in ERR_A], "B acc": [1 - e for e in ERR_B]},
         {"A beats B": claims.compare("A acc", ">", "B acc", names=("A", "B"))}, seeds=[0, 1, 2, 3, 4],
         unit="test-error points")
    _new("t.rev", {"A error": ERR_A, "B error": ERR_B},
         {"B beats A": claims.compare("B error", "<", "A error", names=("B", "A"))}, seeds=[0, 1, 2, 3, 4],
         unit="test-error points")
    err, acc, rev = (claims.describe(i)["effects"] for i in ("t.err", "t.acc", "t.rev"))
    assert err["A beats B"] == acc["A beats B"] == "A better than B by +0.050 test-error points (95 % CI +0.041 to +0.059)"
    assert rev["B beats A"] == "B better than A by −0.050 test-error points (95 % CI −0.059 to −0.041)"
    table = claims.table(expected={})
    for claim_id, effects in (("t.err", err), ("t.acc", acc), ("t.rev", rev)):
        name, text = next(iter(effects.items()))
        assert table.loc[claim_id, "effect"] == f"{name}: {text}"  # the very same words
        ev = claims.evidence(_stored(results, claim_id))
        assert ev.loc[0, "text"] == text


def test_a_flipped_sign_between_chapter_and_table_is_caught(results):
    _new("t.sign", {"A error": ERR_A, "B error": ERR_B},
         {"A beats B": claims.compare("A error", "<", "B error")}, seeds=[0, 1, 2, 3, 4])
    assert claims.check_quote("t.sign", "A beats B", 0.050, decimals=3) == pytest.approx(0.050)
    with pytest.raises(ValueError, match="flipped sign"):
        claims.check_quote("t.sign", "A beats B", -0.050, decimals=3)  # e.g. the chapter printed A − B
    with pytest.raises(ValueError, match="record gives"):
        claims.check_quote("t.sign", "A beats B", 0.07, decimals=3)
    with pytest.raises(KeyError):
        claims.check_quote("t.sign", "no such comparison", 0.05)
    # the same on a chapter's glued words: its quote must be the table's, word for word
    text = claims.describe("t.sign")["effects"]["A beats B"]
    assert claims.quote_problems({"ok": f"at ε = 1: {text}; more words", "other": "no effect here"}) == []
    flipped = text.replace("+", "\N{MINUS SIGN}")  # what a chapter that printed A − B would say
    assert flipped != text
    assert claims.quote_problems({"flipped": f"A beats B: {flipped}"}) == [f"flipped: {flipped}"]


def test_counts_toward_and_a_split_range_come_from_the_record(results):
    eps = [0.05, 0.1, 0.4, 1.6]
    a = {e: [0.20, 0.21, 0.22, 0.20] if e < 0.3 else [0.30, 0.31, 0.32, 0.30] for e in eps}
    b = {e: [0.25, 0.26, 0.26, 0.25] for e in eps}
    samples = {**{f"A, ε = {e:g}": a[e] for e in eps}, **{f"B, ε = {e:g}": b[e] for e in eps}}
    tests = {f"ε = {e:g}": claims.compare(f"A, ε = {e:g}", "<", f"B, ε = {e:g}", names=("A", "B"), at=e)
             for e in eps}
    assert _new("t.split", samples, tests, seeds=[0, 1, 2, 3], over="ε") == "does not hold here"
    d = claims.describe("t.split")
    assert d["counts"] == "2 of 4 comparisons hold, 2 reverse"
    assert d["toward"] == "2 of 4 point the claimed way"
    assert d["split"] == "holds at ε = 0.05, 0.1; reverses at ε = 0.4, 1.6"
    assert claims.table(expected={}).loc["t.split", "split"] == d["split"]
    # not split when every value points one way
    _new("t.all", {k: v for k, v in samples.items()},
         {k: claims.compare(t.lhs, "<", t.rhs, at=t.at) for k, t in tests.items() if t.at < 0.3}, seeds=[0, 1, 2, 3],
         over="ε")
    assert claims.describe("t.all")["split"] == "" and claims.describe("t.all")["verdict"] == "holds"


def test_book_questions_have_their_own_section(results):
    _beats("t.paper", [0.15] * 5)
    _beats("t.book", [0.15] * 5, question="book")
    table = claims.table(expected={})
    assert table.loc["t.paper", "question"] == "paper" and table.loc["t.book", "question"] == "book"
    # an expected claim that no chapter has recorded yet: its section comes from the book's known questions
    assert claims.table(expected={"zhang2017.topology_consensus_speed": ("Z", "c")}).loc[
        "zhang2017.topology_consensus_speed", "question"] == "book"


def test_a_not_testable_records_forest_plot_says_it_decides_nothing(results):
    _beats("t.nt", [MAJORITY] * 5)
    spec = claims.evidence_chart(_stored(results, "t.nt")).to_dict()
    assert "decide nothing" in spec["title"]["text"]
    _beats("t.ok2", [0.15, 0.16, 0.15, 0.14, 0.15])
    assert "title" not in claims.evidence_chart(_stored(results, "t.ok2")).to_dict()
