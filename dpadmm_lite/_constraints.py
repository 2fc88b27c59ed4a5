"""Parameter ranges as data: what a registered algorithm accepts for each of its options.

Each algorithm declares its options next to it (``register(..., constraints={...})``), as
scikit-learn's ``_parameter_constraints`` do; the registry's wrapper checks every argument
against the declaration before the algorithm starts, and ``tests/test_bad_input.py`` reads the
same declarations to build the values each parameter must refuse and the boundary values it
must accept. A declaration is one constraint or a list of them (any one suffices); ``None`` in
the list lets ``None`` through (usually "the default").

>>> from numbers import Real
>>> from dpadmm_lite._constraints import Interval, check
>>> relaxation = Interval(Real, 0, 1, closed="right", note="the paper's λ")
>>> check("relaxation", 0.5, relaxation)
0.5
>>> check("relaxation", 2.0, relaxation)
Traceback (most recent call last):
...
ValueError: relaxation must be in (0, 1] (the paper's λ), got 2.0
"""

from __future__ import annotations

import math
from decimal import Decimal
from numbers import Integral, Real

import numpy as np

from ._validate import SCALE_RANGE

#: Why a positive scale setting (ρ, a clipping bound, a step size, a learning rate, a noise level …)
#: lies in :data:`dpadmm_lite._validate.SCALE_RANGE`: there its reciprocal, its square and its
#: product with two other settings stay inside floating point.
SCALE_NOTE = "outside it the run's arithmetic leaves floating point"

#: Wrong types that no numeric or string constraint accepts (a flag, text, a list, an array, a dict).
WRONG_TYPES = (True, "a", [0.5], np.array([0.5, 0.5]), {}, 1 + 1j)


def _number(value) -> bool:
    """A lone real number (Fraction and Decimal too), not a flag, a string, None or an array."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (Real, np.floating, np.integer, Decimal))


def _float(value) -> float:
    """``value`` as a float; NaN when it has none (a signalling Decimal, a Fraction beyond the float range)."""
    try:
        return float(value)
    except (ValueError, OverflowError):
        return math.nan


def _whole(value) -> bool:
    v = _float(value)
    return math.isfinite(v) and v.is_integer() and v == value


def _show(x) -> str:
    if x == math.inf:
        return "∞"
    return f"{x:g}" if isinstance(x, float) else str(x)


class Interval:
    """Real or whole numbers between two ends, each open or closed.

    Parameters
    ----------
    kind : {numbers.Real, numbers.Integral}
        Real numbers (converted to float) or whole numbers (converted to int; a whole float such as
        ``3.0`` counts).
    left, right : float, int, str or None
        The ends; ``None``: unbounded. A string names a size of the problem (e.g. ``"n"``), read
        from the ``sizes`` given to :meth:`accepts` (without it that end is not checked).
    closed : {"both", "left", "right", "neither"}, default "both"
        Which ends belong to the interval.
    note : str, default ""
        Why the range is what it is, shown in parentheses after it.
    meaning : str, default ""
        What the parameter is, shown in parentheses after its name ("nu (the smoothing strength ν)").
    words : str, default ""
        A bound the problem sets, in words before the range ("a number >= γ_min"); the algorithm checks it.
    """

    def __init__(self, kind, left, right, *, closed: str = "both", note: str = "", meaning: str = "",
                 words: str = ""):
        if kind not in (Real, Integral) or closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"Interval(kind, left, right, closed): kind must be Real or Integral and closed one of "
                             f"'both', 'left', 'right', 'neither', got {kind!r}, {closed!r}")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed
        self.note, self.meaning, self.words = note, meaning, words

    def ends(self, sizes: dict | None = None) -> tuple:
        """The two ends, a named size replaced by its value in ``sizes`` (``None`` when not given).

        Parameters
        ----------
        sizes : dict, optional
            Problem sizes by name (``{"n": 240}``).
        """
        sizes = sizes or {}
        return tuple(sizes.get(e) if isinstance(e, str) else e for e in (self.left, self.right))

    def accepts(self, value, sizes: dict | None = None) -> bool:
        """Whether ``value`` lies in the interval.

        Parameters
        ----------
        value : object
            The argument.
        sizes : dict, optional
            Problem sizes by name, for an end named by a string.
        """
        if not _number(value):
            return False
        if self.kind is Integral:
            if isinstance(value, (Integral, np.integer)):
                v = int(value)  # exact: 10**40 is whole, its float is not
            elif _whole(value):
                v = int(value)
            else:
                return False
        else:
            v = _float(value)
            if math.isnan(v):
                return False
        lo, hi = self.ends(sizes)
        left_ok = lo is None or (v >= lo if self.closed in ("both", "left") else v > lo)
        right_ok = (v < math.inf if hi is None else v <= hi if self.closed in ("both", "right") else v < hi)
        return left_ok and right_ok

    def convert(self, value):
        """``value`` as a float (real numbers) or an int (whole numbers).

        Parameters
        ----------
        value : object
            An accepted argument.
        """
        return int(value) if self.kind is Integral else float(value)

    def describe(self, sizes: dict | None = None, value=None) -> str:
        """The range in words: ``"in (0, 1]"``, ``"a whole number >= 1"``, ``"a whole number in [1, n = 240]"``.

        Parameters
        ----------
        sizes : dict, optional
            Problem sizes by name, for an end named by a string.
        value : object, optional
            The value refused (unused here; :class:`Scale` reads it).
        """
        if self.words:
            return f"{self.words}, {self._within(sizes)}"
        return self._within(sizes)

    def _within(self, sizes: dict | None) -> str:
        lo, hi = self.ends(sizes)
        left, right = (None if v is None else f"{e} = {v}" if isinstance(e, str) else _show(e)
                       for e, v in zip((self.left, self.right), (lo, hi)))
        if self.kind is Integral and right is None and left is not None and self.closed in ("both", "left"):
            return f"a whole number >= {left}"
        opening = "[" if self.closed in ("both", "left") and left is not None else "("
        closing = "]" if self.closed in ("both", "right") and right is not None else ")"
        within = f"{opening}{left or '-∞'}, {right or '∞'}{closing}"
        return f"a whole number in {within}" if self.kind is Integral else f"in {within}"

    def invalid(self, sizes: dict | None = None) -> list:
        """Values just outside each finite end, NaN and ±∞ where refused, a fraction for whole numbers.

        Parameters
        ----------
        sizes : dict, optional
            Problem sizes by name, for an end named by a string.
        """
        lo, hi = self.ends(sizes)
        out = []
        for end, inward, closed in ((lo, math.inf, self.closed in ("both", "left")),
                                    (hi, -math.inf, self.closed in ("both", "right"))):
            if end is None or not math.isfinite(end):
                continue
            if self.kind is Integral:
                out.append(int(end) - 1 if inward > 0 else int(end) + 1)
            else:
                out.append(float(np.nextafter(end, -inward)) if closed else end)
        out += [math.nan, math.inf, -math.inf]
        if self.kind is Integral:
            out.append((lo if lo is not None else 0) + 0.5)
        return out

    def boundary(self, sizes: dict | None = None) -> list:
        """Valid values at the ends: each finite end, or just inside it where it is open.

        Parameters
        ----------
        sizes : dict, optional
            Problem sizes by name, for an end named by a string.
        """
        lo, hi = self.ends(sizes)
        out = []
        for end, inward, closed in ((lo, math.inf, self.closed in ("both", "left")),
                                    (hi, -math.inf, self.closed in ("both", "right"))):
            if end is None or not math.isfinite(end):
                continue
            if self.kind is Integral:
                out.append(int(end) if closed else int(end) + (1 if inward > 0 else -1))
            else:
                out.append(float(end) if closed else float(np.nextafter(end, inward)))
        return out


class Scale(Interval):
    """A positive scale setting in :data:`dpadmm_lite._validate.SCALE_RANGE` ([1e-12, 1e12]).

    A value that is not a positive number is told the parameter is positive (``"in (0, ∞)"``); a
    positive one outside the window is told the window and why (:data:`SCALE_NOTE`).

    Parameters
    ----------
    words : str, default ""
        A bound the problem sets, in words before the range (see :class:`Interval`).
    """

    def __init__(self, *, words: str = ""):
        super().__init__(Real, *SCALE_RANGE, note=SCALE_NOTE, words=words)

    def describe(self, sizes: dict | None = None, value=None) -> str:
        """``"in [1e-12, 1e+12]"``, or ``"in (0, ∞)"`` for a refused value that is not a positive number.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        value : object, optional
            The value refused.
        """
        if value is not None and not (_number(value) and _float(value) > 0):
            return f"{self.words}, in (0, ∞)" if self.words else "in (0, ∞)"
        return super().describe(sizes)

    def noted(self, value) -> bool:
        """Whether the message adds :data:`SCALE_NOTE` (only for a positive value outside the window).

        Parameters
        ----------
        value : object
            The value refused.
        """
        return value is None or (_number(value) and _float(value) > 0)


#: The range of a positive scale setting: [1e-12, 1e12] (see :data:`SCALE_NOTE`).
SCALE = Scale()


class Options:
    """One of a few values: strings (``"accountant"``, ``"paper"``) or numbers (``0``, ``math.inf``).

    Parameters
    ----------
    values : iterable
        The values accepted.
    note : str, default ""
        Why, shown in parentheses after the choices.
    meaning : str, default ""
        What the parameter is, shown in parentheses after its name.
    """

    def __init__(self, values, *, note: str = "", meaning: str = ""):
        self.values = tuple(values)
        self.note, self.meaning = note, meaning

    def accepts(self, value, sizes: dict | None = None) -> bool:
        """Whether ``value`` is one of the options (a string equals a string, a number a number).

        Parameters
        ----------
        value : object
            The argument.
        sizes : dict, optional
            Unused (the signature of every constraint).
        """
        if isinstance(value, str):
            return value in self.values
        return _number(value) and any(_number(v) and _float(value) == v for v in self.values)

    def convert(self, value):
        """``value``, a number as a float.

        Parameters
        ----------
        value : object
            An accepted argument.
        """
        return float(value) if _number(value) else value

    def describe(self, sizes: dict | None = None) -> str:
        """``"one of 'accountant', 'paper'"``, or the single value (``"'paper'"``, ``"math.inf"``, ``"0"``).

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        shown = ["math.inf" if v == math.inf else repr(v) for v in self.values]
        return shown[0] if len(shown) == 1 else "one of " + ", ".join(shown)

    def invalid(self, sizes: dict | None = None) -> list:
        """A string that is not an option, and a number where only strings are accepted.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        return ["not-an-option", 3] if all(isinstance(v, str) for v in self.values) else ["not-an-option"]

    def boundary(self, sizes: dict | None = None) -> list:
        """Every option.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        return list(self.values)


class Boolean:
    """``True`` or ``False`` (NumPy's booleans too), never a number or a string standing for one.

    Parameters
    ----------
    note : str, default ""
        Why, shown in parentheses.
    """

    meaning = ""

    def __init__(self, *, note: str = ""):
        self.note = note

    def accepts(self, value, sizes: dict | None = None) -> bool:
        """Whether ``value`` is a boolean.

        Parameters
        ----------
        value : object
            The argument.
        sizes : dict, optional
            Unused.
        """
        return isinstance(value, (bool, np.bool_))

    def convert(self, value):
        """``value`` unchanged.

        Parameters
        ----------
        value : object
            An accepted argument.
        """
        return value

    def describe(self, sizes: dict | None = None) -> str:
        """``"True or False"``.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        return "True or False"

    def invalid(self, sizes: dict | None = None) -> list:
        """A string and a number.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        return ["yes", 1]

    def boundary(self, sizes: dict | None = None) -> list:
        """``True`` and ``False``.

        Parameters
        ----------
        sizes : dict, optional
            Unused.
        """
        return [True, False]


def members(spec) -> tuple[list, bool]:
    """The constraints of a declaration, and whether it lets ``None`` through.

    Parameters
    ----------
    spec : constraint, None or list of them
        A declaration.
    """
    items = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    return [c for c in items if c is not None], any(c is None for c in items)


def describe(spec, sizes: dict | None = None, value=None) -> str:
    """A declaration in words: ``"in [1e-12, 1e+12] (…) or None"``.

    Parameters
    ----------
    spec : constraint, None or list of them
        A declaration.
    sizes : dict, optional
        Problem sizes by name, for an end named by a string.
    value : object, optional
        The value refused, when the words are for its message.
    """
    constraints, none_ok = members(spec)
    words = [(c.describe(sizes, value) if isinstance(c, Interval) else c.describe(sizes))
             + (f" ({c.note})" if c.note and getattr(c, "noted", lambda v: True)(value) else "")
             for c in constraints]
    return " or ".join(words + (["None"] if none_ok else []))


def check(name: str, value, spec, sizes: dict | None = None):
    """``value`` converted by the first constraint of ``spec`` that accepts it; else a ValueError.

    The message names the parameter, its valid range and the value given:
    ``relaxation must be in (0, 1] (the paper's λ), got 2.0``.

    Parameters
    ----------
    name : str
        The parameter, for the message.
    value : object
        The argument.
    spec : constraint, None or list of them
        Its declaration.
    sizes : dict, optional
        Problem sizes by name, for an end named by a string (``{"n": problem.n}``).
    """
    constraints, none_ok = members(spec)
    if value is None and none_ok:
        return None
    for c in constraints:
        if c.accepts(value, sizes):
            return c.convert(value)
    meaning = next((c.meaning for c in constraints if c.meaning), "")
    shown = "NaN" if isinstance(value, float) and math.isnan(value) else _short(value)
    raise ValueError(f"{name}{f' ({meaning})' if meaning else ''} must be {describe(spec, sizes, value)}, "
                     f"got {shown}")


def invalid(spec, sizes: dict | None = None) -> list:
    """Values ``spec`` refuses: just outside each finite end, NaN, ±∞, wrong types, ``None`` unless allowed.

    Parameters
    ----------
    spec : constraint, None or list of them
        A declaration.
    sizes : dict, optional
        Problem sizes by name, for an end named by a string.
    """
    constraints, none_ok = members(spec)
    candidates = [v for c in constraints for v in c.invalid(sizes)] + list(WRONG_TYPES) + ([] if none_ok else [None])
    out = []
    for v in candidates:
        if not any(c.accepts(v, sizes) for c in constraints) and not any(v is w for w in out):
            out.append(v)
    return out


def boundary(spec, sizes: dict | None = None) -> list:
    """Valid values at the edges of ``spec``: each constraint's ends (or just inside), its options, ``None``.

    Parameters
    ----------
    spec : constraint, None or list of them
        A declaration.
    sizes : dict, optional
        Problem sizes by name, for an end named by a string.
    """
    constraints, none_ok = members(spec)
    return [v for c in constraints for v in c.boundary(sizes)] + ([None] if none_ok else [])


def _short(value) -> str:
    """``repr(value)``, with huge whole numbers in scientific notation and long reprs cut."""
    if isinstance(value, (Integral, np.integer)) and not isinstance(value, bool) and abs(int(value)) >= 10**15:
        return f"{float(value):.3g}"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"
