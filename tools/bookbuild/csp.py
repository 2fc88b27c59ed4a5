"""The Content-Security-Policy of the pages with a "Run live" panel, completed on the built HTML.

The page template (``site_static/_templates/layout.html``) writes the policy into those pages as
a ``<meta http-equiv="Content-Security-Policy">`` before anything loads: ``default-src 'self'``,
scripts from the site itself and WebAssembly (``'wasm-unsafe-eval'``), no ``'unsafe-eval'`` and
no ``'unsafe-inline'`` for scripts. What it cannot know is the theme's and Sphinx's small inline
scripts (the colour mode, the toggle-button hints, MathJax's configuration, the page name);
:func:`install` lists each one's sha256 in the policy of its page, so exactly those run and no
other inline script could. Inline event-handler attributes (``onclick="..."``) cannot be allowed
by a hash: the theme's two (print, full screen) become ``data-dpadmm-click`` attributes that
``site_static/dpadmm-handlers.js`` serves; any other one fails the build.

Vega evaluates its expressions without ``Function`` (the site's ``vegaEmbed`` draws with
``ast: true``, Vega's expression interpreter, see ``tools/bookbuild/stage.py``), so the policy
needs no ``'unsafe-eval'``.
"""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import re
from pathlib import Path

#: The policy of the "Run live" worker (``_static/live/worker.js``). A page's ``<meta>`` policy does
#: not reach its workers: a worker's policy comes from the HTTP headers of its own script, so on a
#: plain static server the worker has none. A server that can set headers should send this one
#: with ``worker.js``: Pyodide, numpy, scipy and the library load and run under it (no
#: ``'unsafe-eval'``; without ``'wasm-unsafe-eval'`` Python never becomes ready), tests/test_csp.py.
WORKER_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'"

#: The theme's inline event handlers and what replaces each (``data-dpadmm-click``, served by
#: ``site_static/dpadmm-handlers.js``).
HANDLERS = {"window.print()": "print", "toggleFullScreen()": "fullscreen"}

_META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)"\s*/?>')
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.S | re.I)
_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'\s>]+)""", re.I)
_SRC = re.compile(r"""\bsrc\s*=""", re.I)
#: ``on...=`` attributes inside a start tag (not in text: the text of a page has its ``<`` escaped).
_HANDLER = re.compile(r"""(<[a-zA-Z][^<>]*?\s)(on[a-z]+)\s*=\s*("[^"]*"|'[^']*')""")
#: Script types a browser runs (any other, e.g. ``application/json``, is data: CSP does not apply).
_JS_TYPES = {"", "text/javascript", "application/javascript", "module", "text/ecmascript",
             "application/ecmascript"}


class CspError(RuntimeError):
    """A live page without its policy, or with an inline event handler the build cannot replace."""


def script_hash(source: str) -> str:
    """The CSP source expression of an inline script: ``'sha256-<base64>'`` of its UTF-8 text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode() + "'"


def inline_scripts(page: str) -> list[str]:
    """The text of every inline script of ``page`` that a browser runs (data blocks left out)."""
    scripts = []
    for attrs, body in _SCRIPT.findall(page):
        kind = _TYPE.search(attrs)
        if _SRC.search(attrs) or (kind and kind.group(1).lower() not in _JS_TYPES):
            continue
        scripts.append(body)
    return scripts


def policy_directives(policy: str) -> dict[str, list[str]]:
    """``"default-src 'self'; img-src 'self' data:"`` as ``{"default-src": ["'self'"], ...}``."""
    directives = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def _replace_handlers(page: str, name: str) -> str:
    def swap(match: re.Match) -> str:
        code = html_lib.unescape(match.group(3)[1:-1]).strip()
        if code not in HANDLERS:
            raise CspError(f"{name}: an inline {match.group(2)}={match.group(3)} attribute, which the page's "
                           "Content-Security-Policy blocks (add it to tools/bookbuild/csp.py HANDLERS and "
                           "site_static/dpadmm-handlers.js)")
        return f'{match.group(1)}data-dpadmm-click="{HANDLERS[code]}"'

    return _HANDLER.sub(swap, page)


def complete(page: str, name: str = "page") -> str:
    """``page`` with its policy completed: the sha256 of each inline script in ``script-src`` and
    the theme's event-handler attributes swapped for ``data-dpadmm-click`` (:data:`HANDLERS`)."""
    metas = _META.findall(page)
    if len(metas) != 1:
        raise CspError(f"{name}: {len(metas)} Content-Security-Policy meta tags, expected one")
    meta = _META.search(page)
    first_script = page.find("<script")
    if first_script != -1 and first_script < meta.start():
        raise CspError(f"{name}: a script comes before the Content-Security-Policy")
    page = _replace_handlers(page, name)
    directives = policy_directives(html_lib.unescape(metas[0]))
    if "script-src" not in directives:
        raise CspError(f"{name}: the Content-Security-Policy has no script-src")
    hashes = sorted({script_hash(s) for s in inline_scripts(page)})
    directives["script-src"] = [s for s in directives["script-src"] if not s.startswith("'sha256-")] + hashes
    policy = "; ".join(" ".join([key, *values]) for key, values in directives.items())
    content = html_lib.escape(policy, quote=False).replace('"', "&quot;")
    meta = _META.search(page)  # again: the handlers' swap may have moved it (it precedes them all)
    return (page[:meta.start()] + f'<meta http-equiv="Content-Security-Policy" content="{content}">'
            + page[meta.end():])


def install(html: Path) -> list[Path]:
    """Complete the policy of every built page that has one (the live pages); the pages changed."""
    pages = []
    for path in sorted(html.rglob("*.html")):
        text = path.read_text(encoding="utf-8")
        if 'http-equiv="Content-Security-Policy"' not in text:
            continue
        path.write_text(complete(text, path.relative_to(html).as_posix()), encoding="utf-8")
        pages.append(path)
    return pages
