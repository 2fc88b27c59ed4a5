"""The bibliography's labels in the form the text cites: "[Boyd et al., 2011]", not "[BPC+11]".

The chapters cite author–year (``bibtex_reference_style: author_year`` in ``_config.yml``:
"Boyd *et al.*, 2011"); sphinxcontrib-bibtex labels the bibliography page with its formatting
style, by default ``alpha`` ("BPC+11"). :class:`AuthorYearStyle` is pybtex's ``unsrt`` formatting
with :class:`AuthorYearLabelStyle`, whose labels are built by the same template and the same
person style as the author–year citations, so a reader finds "Boyd et al., 2011" under that
label. Entries are sorted by author, year and title, as ``alpha`` sorts them; two entries that
would share a label get "a", "b" after the year.

Both are pybtex plugins, registered as entry points in ``pyproject.toml`` (groups
``pybtex.style.formatting`` and ``pybtex.style.labels``, name :data:`NAME`); the site selects
the style with ``bibtex_default_style`` in ``_config.yml``.
"""

from __future__ import annotations

from collections import Counter

from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle

__all__ = ["NAME", "AuthorYearLabelStyle", "AuthorYearStyle", "author_year"]

#: The plugin name of both styles (``bibtex_default_style: dpadmm-author-year``).
NAME = "dpadmm-author-year"


def author_year(entry) -> str:
    """The text an author–year citation of ``entry`` shows, as plain text ("Boyd et al., 2011")."""
    from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
    from sphinxcontrib.bibtex.style.template import join, year

    style = AuthorYearReferenceStyle()  # the style of ``bibtex_reference_style: author_year``
    template = join(sep=", ")[style.person.author_or_editor_or_title(full=False), year]
    return template.format_data({"entry": entry, "style": style}).render_as("text")


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Author et al., year" (one or two authors by name), "a", "b" added where two coincide."""

    def format_labels(self, sorted_entries):
        labels = [author_year(entry) for entry in sorted_entries]
        count, seen = Counter(labels), Counter()
        for label in labels:
            if count[label] == 1:
                yield label
            else:
                yield label + "abcdefghijklmnopqrstuvwxyz"[seen[label]]
                seen[label] += 1


class AuthorYearStyle(UnsrtStyle):
    """pybtex's ``unsrt`` entries, labelled author–year and sorted by author, year and title."""

    default_label_style = NAME
    default_sorting_style = "author_year_title"
