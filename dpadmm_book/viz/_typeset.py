"""Axis titles a reader can read: TeX-like names typeset with Unicode, column names as words.

Vega draws titles as plain text (no MathJax), so ``F(x_t^DP) − F(x_t)`` would show its
underscores and carets. :func:`typeset` turns sub- and superscripts and Greek names into
Unicode (``F(xₜᴰᴾ) − F(xₜ)``); :func:`axis_title` names a data column (``test_accuracy`` →
"test accuracy", ``objective_gap`` → "objective gap F(xₖ) − F(x*)").
"""

from __future__ import annotations

import re

__all__ = ["typeset", "axis_title"]

_SUB = dict(zip("0123456789+-=()aehijklmnoprstuvxβγρφχ,", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓᵦᵧᵨᵩᵪ,"))
_SUP = dict(zip("0123456789+-=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW*⊤βγδθφχ",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ*ᵀᵝᵞᵟᶿᵠᵡ"))
_SUP[","] = "˒"
_SUB["−"], _SUP["−"] = "₋", "⁻"  # the minus sign U+2212, as in k−1
_NAMES = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε", "zeta": "ζ",
    "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
    "Gamma": "Γ", "Delta": "Δ", "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Omega": "Ω",
    "ell": "ℓ", "infty": "∞", "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
    "sqrt": "√", "top": "⊤", "star": "*", "ast": "*", "approx": "≈", "to": "→", "in": "∈", "log": "log",
    "ln": "ln", "min": "min", "max": "max", "quad": " ", ",": " ", " ": " ",
}
#: Per-iteration metrics and common sweep columns, in the book's notation.
TITLES = {
    "objective": "objective F(xₖ)",
    "objective_gap": "objective gap F(xₖ) − F(x*)",
    "test_accuracy": "test accuracy",
    "test_error": "test error",
    "consensus_violation": "consensus violation √(mean ‖xᵢ − x̄‖²)",
    "augmented_objective": "augmented objective",
    "empirical_loss": "empirical loss",
    "iteration": "iteration k",
}


def _script(body: str, table: dict[str, str]) -> str | None:
    out = [table.get(ch) for ch in body]
    return None if None in out else "".join(out)


def typeset(text: str) -> str:
    """``text`` with TeX-like markup as Unicode: ``x_t`` → xₜ, ``x^{DP}`` → xᴰᴾ, ``\\rho`` → ρ.

    An unbraced superscript takes a run of capitals or digits (``x^DP`` → xᴰᴾ), or a group in
    parentheses (``r^(d−1)`` → rᵈ⁻¹). A subscript with a character Unicode has no small form for
    keeps its letters (in parentheses when more than one); such a superscript keeps its caret,
    so that its meaning stays (``(1 + 4ν)^{3/2}`` → "(1 + 4ν)^(3/2)", never a product). ``$``
    signs are dropped; snake_case words get spaces.
    """
    if not isinstance(text, str):
        return text
    text = text.replace("$", "")
    def word(match):  # x_word: a subscript word (F_test → Fₜₑₛₜ) or snake_case (test_accuracy, n_agents)
        before, after = match.group(1), match.group(2)
        small = _script(after, _SUB)
        if len(before) == 1 and small is not None:
            return before + small
        return f"{before} {after}"

    text = re.sub(r"(?<![A-Za-z])([A-Za-z]+)_([A-Za-z]{2,})(?![A-Za-z])", word, text)
    text = re.sub(r"_(?=[A-Za-z]{2})", " ", text)  # what is left of snake_case: a_b_cd
    text = re.sub(r"\\([A-Za-z]+|[, ])", lambda m: _NAMES.get(m.group(1), m.group(1)), text)
    text = text.replace("{}", "")

    def script(match, table):
        body = next(g for g in match.groups() if g is not None)
        small = _script(body, table)
        if small is not None:
            return small
        if table is _SUP:  # x^(3/2) is not x·(3/2): the caret stays
            return "^" + (body if len(body) == 1 else f"({body})")
        return body if len(body) == 1 else f"({body})"

    for _ in range(2):  # x_{t^2}: inner first, then outer
        text = re.sub(r"\^\{([^{}]*)\}|\^\(([^()]*)\)|\^([A-Z0-9]+|[^\s(])", lambda m: script(m, _SUP), text)
        text = re.sub(r"_\{([^{}]*)\}|_([^\s_^(){}])", lambda m: script(m, _SUB), text)
    return text


def axis_title(column: str) -> str:
    """A title for a data column: the book's name for a known metric, words for snake_case."""
    if column in TITLES:
        return TITLES[column]
    parts = column.split("_")
    if len(parts) > 1 and all(len(p) >= 2 and p.isalpha() for p in parts):
        return " ".join(parts)  # test_accuracy → test accuracy
    return typeset(column)
