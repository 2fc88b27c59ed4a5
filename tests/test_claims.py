"""The claims record: verdicts follow from measured numbers, never from a typed word."""

from __future__ import annotations

import json

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
