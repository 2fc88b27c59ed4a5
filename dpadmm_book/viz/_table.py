"""A table as the book prints it: numbers formatted, columns spaced, a caption, no row numbers."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

#: The class the site's stylesheet (site_static/dpadmm.css) spaces and aligns.
TABLE_CLASS = "dpadmm-table"
#: The class of a cell in a numeric column.
NUMBER_CLASS = "dpadmm-num"


def _significant(digits: int) -> Callable[[object], str]:
    def show(value) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or pd.isna(value):
            return str(value)
        if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e6:
            return f"{int(value):,}"
        return f"{value:.{digits}g}"
    return show


def table(frame: pd.DataFrame, *, caption: str | None = None, formats: Mapping[str, str | Callable] | None = None,
          digits: int = 4, index: bool = False, na_rep: str = "—"):
    """``frame`` as a styled table (a pandas ``Styler``) for a chapter.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows to show.
    caption : str, optional
        One line above the table that says what it shows.
    formats : mapping, optional
        Column → format string (``"{:.3f}"``, ``"{:.2e}"``, ``"{:.0%}"``) or function; every other numeric
        column shows ``digits`` significant digits, whole numbers with thousands separators.
    digits : int
        Significant digits of the numeric columns ``formats`` does not name (1 … 15).
    index : bool
        Show the frame's index (a named index is a column of labels, e.g. the topology).
    na_rep : str
        What a missing value reads.

    Returns
    -------
    pandas.io.formats.style.Styler
        Displays as the table; the site spaces its columns and right-aligns its numbers (class ``dpadmm-table``).
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if isinstance(digits, bool) or not isinstance(digits, int) or not 1 <= digits <= 15:
        raise ValueError(f"digits must be an integer in [1, 15], got {digits!r}")
    formats = dict(formats or {})
    unknown = set(formats) - set(frame.columns)
    if unknown:
        raise ValueError(f"formats names columns the frame does not have: {sorted(map(str, unknown))} "
                         f"(columns: {[str(c) for c in frame.columns]})")
    if frame.columns.name is not None:  # a pivot's column name would head a column of its own
        frame = frame.rename_axis(columns=None)
    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c]) and c not in formats]
    styler = frame.style.format({**{c: _significant(digits) for c in numeric}, **formats}, na_rep=na_rep)
    # numbers right-aligned in tabular figures (site_static/dpadmm.css): their columns are marked
    marked = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
    classes = pd.DataFrame("", index=frame.index, columns=frame.columns)
    classes[marked] = NUMBER_CLASS
    styler = styler.set_td_classes(classes)
    # a number heading a column (a pivot's ε) reads as itself, not as pandas' 0.100000
    styler = styler.format_index(lambda v: f"{v:g}" if isinstance(v, float) else str(v), axis="columns")
    if not index:
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(caption)
    return styler.set_table_attributes(f'class="{TABLE_CLASS}"')
