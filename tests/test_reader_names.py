"""Readers see the book's names and typeset notation only; the static site never asks them to run a cell.

* Names: every registered algorithm has a label (``registry.register`` records it; no two alike),
  every topology a book's name; the site's drop-downs and legends (``viz.sweep_chart``), the
  JupyterLab drop-downs (``widgets.live``: the reader sees "small world", ``compute`` still gets
  ``"small_world"``), run summaries and curve legends show them, never ``dp_acc_admm``.
* Notation: no chapter's prose (markdown outside math, code and links) writes a sub- or
  superscript in plain text (``m_i``, ``η_i^k``, ``σ_{i,k}``, ``(1 + 4ν)^{3/2}``).
* Checks: an exercise check not answered asks for a run of the cell in JupyterLab only; the
  site's version (what the book build shows) says to open the chapter in JupyterLab.
* The built site (the test session's fast build, or ``$DPADMM_SITE``): no page contains "run the
  cell", no drop-down, legend or table shows an internal name, and the bibliography's labels are
  the author–year texts the chapters cite ("Boyd et al., 2011", not "[BPC+11]").
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpadmm_lite as dl
import dpadmm_book as book
from dpadmm_lite import labels, registry, topology
from dpadmm_book import widgets
from dpadmm_book.exercises import Feedback, not_answered

ROOT = Path(__file__).resolve().parents[1]

# ----------------------------------------------------------------------------- untypeset notation
#: A sub- or superscript written in plain text: ``m_i``, ``N_p``, ``σ_{i,k}``, ``η^k``, ``x^{3/2}``,
#: ``r^(d−1)``. A subscript is one letter or digit (Latin or Greek) or a braced group, so that
#: snake_case words (which are not notation) are not matched.
UNTYPESET = re.compile(r"(?:(?<=[\w)\]}′'*|])_(?:\{|[A-Za-z0-9α-ωΑ-Ω](?![A-Za-z0-9_]))"
                       r"|(?<=[\w)\]}′'*|])\^(?:\{|\(|[A-Za-z0-9α-ωΑ-Ω*]))")

_CODE_FENCE = re.compile(r"^(`{3,}|~{3,})(?![`~{])[^\n]*\n.*?^\1[ \t]*$", re.S | re.M)
_CODE_DIRECTIVE = re.compile(r"^(`{3,}|~{3,})\{(?:code-cell|code-block|code|math|glue:math)\}[^\n]*\n.*?^\1[ \t]*$",
                             re.S | re.M)
_NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.S),                                   # display math
    re.compile(r"\\begin\{(\w+\*?)\}.*?\\end\{\1\}", re.S),              # amsmath environments
    re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$"),                 # inline math
    re.compile(r"^[`~:]{3,}\{[\w:-]+\}.*$", re.M),                       # a directive's line: ```{solution} ch_ex_2
    re.compile(r"\{[\w:-]+\}`[^`]*`"),                                   # roles: {ref}`ch3_ex_2`, {glue:text}`x_1`
    re.compile(r"`[^`]*`"),                                              # inline code
    re.compile(r"\]\([^)]*\)|<https?://[^>]*>|https?://\S+"),           # link targets, URLs
    re.compile(r"^\s*:[\w-]+:.*$", re.M),                                # directive options: :label: ch3_ex_2
    re.compile(r"^\(.*\)=\s*$", re.M),                                   # targets: (privacy-audit)=
    re.compile(r"^%.*$|<!--.*?-->|<[^>]+>", re.M | re.S),                # comments, HTML tags
]


def prose(markdown: str) -> str:
    """``markdown`` without what is not prose: code, math, roles, link targets, directive lines, labels."""
    text = _CODE_DIRECTIVE.sub(" ", markdown)
    text = _CODE_FENCE.sub(" ", text)
    for pattern in _NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


def untypeset(markdown: str) -> list[str]:
    """The plain-text sub/superscripts of ``markdown``'s prose, each with a little context."""
    text = prose(markdown)
    return [text[max(0, m.start() - 25):m.end() + 15].replace("\n", " ") for m in UNTYPESET.finditer(text)]


def chapter_markdown():
    """(document, markdown) of every markdown cell of book/*.ipynb and every book/*.md."""
    for path in sorted((ROOT / "book").glob("*.md")):
        yield path.name, path.read_text()
    for path in sorted((ROOT / "book").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                yield f"{path.name}[{i}]", "".join(cell["source"])


@pytest.mark.parametrize("text, found", [
    ("the sensitivity 2c₁/(m_i(ρ+1/η_i^k)) of one agent", True),
    ("a pure α_p(t)-DP guarantee", True),
    ("the noise σ_{i,k} shrinks", True),
    ("the limit (1 + 2ν)/(1 + 4ν)^{3/2}", True),
    ("a density ∝ r^(d−1)", True),
    ("the operator Q_ν", True),
    ("the sensitivity $2c_1/(m_i(\\rho + 1/\\eta_i^k))$ of one agent", False),
    ("$$\nx_{k+1} = x_k^2\n$$", False),
    ("`dl.run(\"dp_admm\", n_agents=10)` and {ref}`ch3_ex_2` and {glue:text}`eps_1:.2f`", False),
    ("```{exercise}\n:label: privacy_ex_2\n\nA question.\n```", False),
    ("```python\nx_i = y_j ** 2\n```", False),
    ("see [the code](https://example.org/a_b.py) or <https://x.org/y_z>", False),
    ("test_accuracy and n_agents are columns", False),
    ("σᵢ,ₖ and ηᵢᵏ are typeset", False),
])
def test_the_scan_finds_plain_text_scripts_in_prose_only(text, found):
    assert bool(untypeset(text)) is found, untypeset(text)


def test_no_chapter_writes_a_sub_or_superscript_in_plain_text():
    """Prose of every chapter: notation is MyST math ($m_i$) or Unicode (mᵢ), never m_i."""
    found = [f"{doc}: …{hit}…" for doc, text in chapter_markdown() for hit in untypeset(text)]
    assert not found, "write these as $…$ math (or Unicode sub/superscripts):\n" + "\n".join(found[:40])


def test_typeset_keeps_what_it_cannot_shrink_meaningful():
    """Unicode has no small 3/2: the caret stays (x^(3/2) is not x·(3/2)); k−1 uses the minus sign."""
    assert book.viz.typeset("(1 + 4ν)^{3/2}") == "(1 + 4ν)^(3/2)"
    assert book.viz.typeset("γ_i^{k−1}") == "γᵢᵏ⁻¹"
    assert book.viz.typeset("r^(d−1)") == "rᵈ⁻¹"


# ----------------------------------------------------------------------------- the book's names
def test_every_registered_algorithm_has_its_own_label():
    names = dl.algorithm_names()
    found = {name: registry.label(name) for name in names}
    missing = [name for name, label in found.items() if not label or label == name]
    assert not missing, f"algorithms without a book's name: {missing}"
    assert len(set(found.values())) == len(found), f"two algorithms share a label: {found}"
    assert found["dp_acc_admm"] == "DP-AccADMM" and found["pvp_star"] == "PVP (star)"
    assert all(labels.ALGORITHMS[name] == label for name, label in found.items())
    table = dl.algorithm_table()
    assert all(registry.info(name).label for name in table.index)


def test_register_refuses_an_algorithm_without_a_label_or_with_a_taken_one(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(labels, "ALGORITHMS", dict(labels.ALGORITHMS))
    kwargs = dict(paper="x", private=False, setting="centralized", description="an algorithm of a test")
    with pytest.raises(ValueError, match="label of algorithm 'zz_unnamed' must be a non-empty string"):
        registry.register("zz_unnamed", **kwargs)
    with pytest.raises(ValueError, match="label of algorithm 'zz_copy' must differ .* 'dp_acc_admm'"):
        registry.register("zz_copy", label="DP-AccADMM", **kwargs)
    registry.register("zz_new", label="ZZ-ADMM", **kwargs)(lambda problem, **options: None)
    assert registry.label("zz_new") == "ZZ-ADMM" and labels.readable("zz_new") == "ZZ-ADMM"


def test_every_topology_and_problem_kind_has_a_book_name():
    assert set(topology.LABELS) == set(topology.NAMES)
    assert topology.label("erdos_renyi") == "Erdős–Rényi" and topology.label("small_world") == "small world"
    assert topology.make("small_world", 8).label == "small world"
    with pytest.raises(ValueError, match="name must be one of"):
        topology.label("torus")
    assert set(labels.PROBLEM_LABELS) == set(registry.TASKS)
    names = labels.book_names()
    assert "small_world" in names and "dp_acc_admm" in names and "logistic-l1" in names
    assert labels.readable("ADMM") == "ADMM" and labels.readable(0.5) == 0.5


def test_a_setting_reads_in_the_book_notation():
    assert labels.setting_text({"rho": 0.1, "clip": 0.3, "sampling_rate": 0.1}) == "ρ = 0.1, clip = 0.3, q = 0.1"
    assert labels.setting_text({}) == "defaults"
    assert labels.parameter("learning_rate") == "learning rate"


def _selects(spec) -> dict[str, list]:
    found = {}

    def walk(node):
        if isinstance(node, dict):
            bind = node.get("bind")
            if isinstance(bind, dict) and bind.get("input") == "select":
                found[bind["name"].strip()] = list(bind["options"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return found


def _rows(spec) -> list[dict]:
    return [row for rows in spec.get("datasets", {}).values() for row in rows if isinstance(row, dict)]


def test_sweep_chart_shows_book_names_in_drop_downs_legend_and_tooltips():
    frame = pd.DataFrame([{"algorithm": a, "topology": t, "epsilon": e, "iteration": k, "gap": 1.0 / k}
                          for a in ("dp_acc_admm", "pvp_star") for t in ("ring", "small_world", "erdos_renyi")
                          for e in (0.1, 1.0) for k in (1, 2)])
    spec = book.viz.sweep_chart(frame, x="iteration", y="gap", color="algorithm", sliders=["epsilon"],
                              selects=["topology"], defaults={"topology": "small_world"}).to_dict()
    selects = _selects(spec)
    assert selects["G"] == ["ring", "small world", "Erdős–Rényi"]
    assert [p["value"] for p in spec["params"] if "bind" in p and p["bind"].get("input") == "select"] == ["small world"]
    rows = [row for row in _rows(spec) if "algorithm" in row]
    assert {row["algorithm"] for row in rows} == {"DP-AccADMM", "PVP (star)"}  # legend and tooltips
    assert {row["topology"] for row in rows} == {"ring", "small world", "Erdős–Rényi"}


def test_a_joint_drop_down_shows_book_names_too():
    """Drop-downs that do not all combine become one (the arena's task · algorithm): book's names there too."""
    frame = pd.DataFrame([{"task": t, "algorithm": a, "epsilon": e, "utility": 0.1}
                          for t, algs in (("Adult", ("dp_acc_admm", "pvp_star")), ("Lasso", ("dp_acc_admm",)))
                          for a in algs for e in (0.1, 1.0)])
    spec = book.viz.sweep_chart(frame, x="epsilon", y="utility", selects=["task", "algorithm"],
                              defaults={"task": "Lasso", "algorithm": "dp_acc_admm"}).to_dict()
    (options,) = _selects(spec).values()
    assert options == ["Adult · DP-AccADMM", "Adult · PVP (star)", "Lasso · DP-AccADMM"]
    assert "Lasso · DP-AccADMM" in [p.get("value") for p in spec["params"]]


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, values):
        self.calls.append(dict(values))
        return "ok"


def test_jupyterlab_drop_downs_show_book_names_and_pass_the_internal_value():
    compute = _Recorder()
    panel = widgets.live(compute, topology="small_world", regularizer="l1",
                         advanced={"algorithm": ["dp_acc_admm", "pvp_star"], "task": [("Adult", "adult"), ("Lasso", "lasso")],
                                   "sampling_rate": 0.5})
    assert panel.controls["topology"].label == "small world" and panel.controls["regularizer"].label == "ℓ1"
    assert panel.controls["topology"].options[-2:] == (("Erdős–Rényi", "erdos_renyi"), ("small world", "small_world"))
    assert panel.controls["algorithm"].label == "DP-AccADMM" and panel.controls["task"].label == "Adult"
    assert panel.controls["sampling_rate"].description == "q"
    assert compute.calls[-1] == {"topology": "small_world", "regularizer": "l1", "algorithm": "dp_acc_admm",
                                 "task": "adult", "sampling_rate": 0.5}
    panel.controls["topology"].value = "erdos_renyi"
    panel.controls["algorithm"].label = "PVP (star)"  # the reader picks a name; compute gets the value
    panel.wait()
    assert compute.calls[-1]["topology"] == "erdos_renyi" and compute.calls[-1]["algorithm"] == "pvp_star"


def test_run_summaries_and_curve_legends_name_the_algorithm_as_the_book_does():
    X = np.random.default_rng(0).standard_normal((60, 3))
    problem = dl.problems.logistic(X / np.linalg.norm(X, axis=1, keepdims=True), np.sign(X[:, 0]) + (X[:, 0] == 0),
                                   1e-2, "l2")
    trace = dl.run("dp_acc_admm", problem, epsilon=1.0, delta=1e-5, iterations=3)
    assert trace.algorithm == "dp_acc_admm" and trace.summary().startswith("DP-AccADMM: 3 iterations")
    rows = _rows(book.viz.objective_gap([trace]).to_dict())
    assert {row["run"] for row in rows} == {"DP-AccADMM"}


def test_the_arena_reports_algorithms_and_settings_by_their_book_names():
    table = book.arena.grid_table(["lasso"], budget=2)
    assert "DP-AccADMM" in table.index and not set(table.index) & labels.internal_names()
    assert not any(re.search(r"\brho\b|sampling_rate", grid) for grid in table["tuning grid"])


# ----------------------------------------------------------------------------- exercise checks
def _check_functions():
    import importlib
    import pkgutil

    import dpadmm_book.exercises as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name in sorted(getattr(module, "__all__", ())):
            if name.startswith("check_"):
                yield f"{info.name}.{name}", getattr(module, name)


@pytest.mark.parametrize("name, check", list(_check_functions()), ids=lambda v: v if isinstance(v, str) else "")
def test_a_check_not_answered_asks_to_run_the_cell_in_jupyterlab_only(name, check):
    from IPython.core.interactiveshell import InteractiveShell

    feedback = check(...)
    assert isinstance(feedback, Feedback) and not feedback
    assert "run the cell" in feedback.message, f"{name}: JupyterLab says what to do: {feedback.message}"
    assert feedback.site_message and not re.search(r"\brun (the|this|it)\b", feedback.site_message)
    assert "open this chapter in JupyterLab" in feedback.site_message
    data, metadata = InteractiveShell.instance().display_formatter.format(feedback)
    assert data["text/markdown"] == feedback.message  # what JupyterLab shows
    assert metadata["dpadmm"]["site"] == {"text/markdown": feedback.site_message, "text/plain": feedback.site_message}


def test_the_book_build_shows_the_sites_version_of_a_check(tmp_path):
    """tools/bookbuild/stage.py: an executed notebook's check output becomes the site's text."""
    from IPython.core.interactiveshell import InteractiveShell

    sys.path.insert(0, str(ROOT / "tools"))
    from bookbuild.stage import _prepare_for_site

    data, metadata = InteractiveShell.instance().display_formatter.format(not_answered("σ of exercise 2"))
    answered, _ = InteractiveShell.instance().display_formatter.format(Feedback(True, "✓ σ: correct — run it again"))
    cell = {"cell_type": "code", "metadata": {}, "source": "ex.check_sigma(answer)", "execution_count": 1,
            "outputs": [{"output_type": "execute_result", "execution_count": 1, "data": data, "metadata": metadata},
                        {"output_type": "execute_result", "execution_count": 1, "data": answered, "metadata": {}}]}
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    _prepare_for_site(path)
    unanswered, right = json.loads(path.read_text())["cells"][0]["outputs"]
    assert unanswered["data"]["text/markdown"] == ("◻ σ of exercise 2: not answered here — open this chapter in "
                                                   "JupyterLab to try it.")
    assert "run the cell" not in json.dumps(unanswered) and "dpadmm" not in unanswered["metadata"]
    assert right["data"] == answered  # an output without a site version stays as it was


# ----------------------------------------------------------------------------- the built site
def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if p.relative_to(site).parts[0] != "lite")  # not the Lite app


def _specs(html: str) -> list[dict]:
    found = re.findall(r'<script type="application/json" class="dpadmm-vega-spec"[^>]*>(.*?)</script>', html, re.S)
    return [json.loads(s.replace("<\\/", "</")) for s in found]


def _legend_values(spec) -> set[str]:
    """The string values of every field a chart shows as a legend, a facet header or a text mark."""
    fields = set()

    def walk(node):
        if isinstance(node, dict):
            channels = dict(node.get("encoding") or {})
            channels.update({key: node[key] for key in ("facet", "column", "row") if isinstance(node.get(key), dict)})
            for channel, enc in channels.items():
                if channel in ("color", "strokeDash", "shape", "text", "column", "row", "facet", "x", "y") \
                        and isinstance(enc, dict) and enc.get("type") == "nominal" and "field" in enc:
                    fields.add(enc["field"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    return {row[f] for row in _rows(spec) for f in fields if isinstance(row.get(f), str)}


def test_no_page_of_the_site_asks_the_reader_to_run_a_cell(site_dir):
    found = [page.relative_to(site_dir).as_posix() for page in _pages(site_dir)
             if "run the cell" in page.read_text().lower()]
    assert not found, f"pages that ask the reader to run a cell, which no static page can do: {found}"


def test_drop_downs_legends_and_tables_of_the_site_show_the_books_names(site_dir):
    from bs4 import BeautifulSoup

    internal = labels.internal_names() - {"fused"}  # "fused" is also a word of the prose
    problems, options = [], 0
    for page in _pages(site_dir):
        html = page.read_text()
        rel = page.relative_to(site_dir).as_posix()
        for spec in _specs(html):
            for name, choices in _selects(spec).items():
                options += len(choices)
                shown = {str(c) for c in choices} | {part for c in choices for part in str(c).split(" · ")}
                problems += [f"{rel}: drop-down {name!r} offers {c!r}" for c in sorted(shown & internal)]
            problems += [f"{rel}: a legend shows {v!r}" for v in sorted(_legend_values(spec) & internal)]
        for table in BeautifulSoup(html, "html.parser").select("table"):
            cells = {cell.get_text(" ", strip=True) for cell in table.select("td, th")}
            problems += [f"{rel}: a table shows {v!r}" for v in sorted(cells & internal)]
    assert options >= 10, f"expected the book's drop-downs, found {options} options"
    assert not problems, "\n".join(problems[:40])


def test_the_bibliography_labels_entries_as_the_chapters_cite_them(site_dir):
    from bs4 import BeautifulSoup

    page = BeautifulSoup((site_dir / "book" / "bibliography.html").read_text(), "html.parser")
    entries = page.select("div.citation")
    labels_shown = [entry.select_one("span.label").get_text("", strip=True).strip("[]") for entry in entries]
    assert len(labels_shown) >= 30, labels_shown
    author_year = re.compile(r"^[^\d\[\]+]+, (?:1[89]|20)\d\d[a-z]?$")  # "Boyd et al., 2011", "Zhang and Zhu, 2017"
    odd = [label for label in labels_shown if not author_year.match(label)]
    assert not odd, f"bibliography labels that are not author–year: {odd}"
    assert "Boyd et al., 2011" in labels_shown and "Zhang and Zhu, 2017" in labels_shown
    cited = set()
    for chapter in _pages(site_dir / "book"):
        for link in BeautifulSoup(chapter.read_text(), "html.parser").select("span.bibtex-citation a"):
            cited.add(" ".join(link.get_text().split()))
    assert cited, "no citation found in the chapters"
    assert not cited - set(labels_shown), f"cited as, but not labelled so in the bibliography: {sorted(cited - set(labels_shown))}"
