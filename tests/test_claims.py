"""The claims record: verdicts follow from measured numbers, never from a typed word."""

from __future__ import annotations

import json

import build_book
import pytest

from dpadmm_lite import claims



@pytest.fixture()
def results(tmp_path, monkeypatch):
    monkeypatch.setenv("DPADMM_RESULTS_DIR", str(tmp_path))
    return tmp_path


def test_verdict_follows_from_the_comparisons(results):
    measured = {"a": 0.9, "b": 0.8, "c": 0.95}
    assert claims.record("t.one", chapter="t", paper="P", claim="a beats b", where="s", measured=measured,
                         tests={"a>b": ("a", ">", "b")}) == "holds"
    assert claims.record("t.two", chapter="t", paper="P", claim="a beats b and c", where="s", measured=measured,
                         tests={"a>b": ("a", ">", "b"), "a>c": ("a", ">", "c")}) == "holds partly"
    assert claims.record("t.three", chapter="t", paper="P", claim="a below 0.5", where="s", measured=measured,
                         tests={"a<0.5": ("a", "<", 0.5)}) == "does not hold here"
    stored = {e["id"]: e for e in claims.load(results)}
    assert [stored[k]["verdict"] for k in ("t.one", "t.two", "t.three")] == ["holds", "holds partly", "does not hold here"]
    assert json.loads((results / "t.two.json").read_text())["measured"] == measured


def test_record_rejects_bad_input(results):
    with pytest.raises(ValueError, match="claim_id"):
        claims.record("bad id", chapter="t", paper="P", claim="c", where="s", measured={"a": 1}, tests={"x": ("a", ">", 0)})
    with pytest.raises(ValueError, match="not a key"):
        claims.record("t.k", chapter="t", paper="P", claim="c", where="s", measured={"a": 1}, tests={"x": ("b", ">", 0)})
    with pytest.raises(ValueError, match="finite"):
        claims.record("t.k", chapter="t", paper="P", claim="c", where="s", measured={"a": float("nan")},
                      tests={"x": ("a", ">", 0)})
    with pytest.raises(ValueError, match="op"):
        claims.record("t.k", chapter="t", paper="P", claim="c", where="s", measured={"a": 1}, tests={"x": ("a", "=", 0)})


# ---------------------------------------------------------------------- the reproducibility table
def _record(claim_id, measured, tests, **extra):
    return claims.record(claim_id, chapter=claim_id.split(".")[0], paper="P", claim=f"claim {claim_id}",
                         where="s", measured=measured, tests=tests, **extra)


def test_problems_finds_a_verdict_its_numbers_do_not_support(results):
    _record("t.ok", {"a": 2.0, "b": 1.0}, {"a>b": ("a", ">", "b")})
    path = results / "t.ok.json"
    entry = json.loads(path.read_text())
    assert claims.problems(entry) == []
    entry["verdict"] = "does not hold here"  # typed by hand over the computed one
    assert "give 'holds'" in claims.problems(entry)[0]
    entry["verdict"], entry["measured"]["a"] = "holds", 0.5  # numbers edited after the fact
    assert "give 'does not hold here'" in claims.problems(entry)[0]
    assert "missing" in claims.problems({"id": "x"})[0]
    entry["measured"]["a"] = 2.0
    entry["tests"] = {"bad": ["nope", ">", 1]}
    assert "cannot be evaluated" in claims.problems(entry)[0]


def test_table_lists_every_expected_claim_and_every_record(results):
    expected = {"xu2020.threshold": ("Xu et al. 2020", "A beats B above a threshold"),
                "huang2019.agents": ("Huang et al. 2019", "more agents, less accuracy")}
    _record("xu2020.threshold", {"gap_small": 1.0, "gap_large": -1.0},
            {"worse at small ε": ("gap_small", ">", 0), "better at large ε": ("gap_large", ">", 0)}, note="n")
    _record("zhang2017.found", {"x": 1.0}, {"x>0": ("x", ">", 0)})
    bad = json.loads((results / "zhang2017.found.json").read_text())
    bad["verdict"] = "does not hold here"
    (results / "zhang2017.found.json").write_text(json.dumps(bad))
    table = claims.table(expected=expected)
    assert list(table.index) == ["xu2020.threshold", "huang2019.agents", "zhang2017.found"]  # paper order
    assert table.loc["xu2020.threshold", "verdict"] == "holds partly"
    assert "gap_small = 1" in table.loc["xu2020.threshold", "measured"]
    assert table.loc["huang2019.agents", "verdict"] == claims.NOT_TESTED
    assert table.loc["huang2019.agents", "claim"] == "more agents, less accuracy"
    assert table.loc["zhang2017.found", "verdict"] == "inconsistent record"
    assert not table.loc["zhang2017.found", "listed"] and table.loc["xu2020.threshold", "listed"]


def test_expected_claims_are_those_of_spec():
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


def test_fast_build_records_support_their_verdicts(fast_build):
    """Every verdict a chapter recorded in the test build follows from its own numbers, and every
    claim SPEC lists was tested by some chapter."""
    records = claims.load(build_book.results_dir(fast_build.stage.parent))
    wrong = {e["id"]: claims.problems(e) for e in records if claims.problems(e)}
    assert not wrong, f"claim records whose verdict their data do not support: {wrong}"
    missing = sorted(set(claims.EXPECTED) - {e["id"] for e in records})
    assert not missing, f"claims listed in claims.EXPECTED that no chapter recorded in the fast build: {missing}"
