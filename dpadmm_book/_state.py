"""The library's module-level state as its import left it, and what has changed since.

The sweep cache (:mod:`dpadmm_book.sweep`) keys a sweep by the library's files. A setting changed
while a kernel runs is not in the files: a module-level dict mutated in place
(``dl.labels.PARAMETER_LABELS["rho"] = …``), a constant rebound (``star._ROUNDING_MARGIN = …``), a
function monkeypatched (replaced, or its ``__code__`` swapped), a class attribute changed. This module
records, when each module of the library has finished its import (and again when ``import dpadmm_lite``
has finished, which imports the algorithms and fills the registry's tables), what every tracked name
holds; then :func:`changes` lists the names whose value differs now, and the sweep hashes those by
content.

Tracked: every public module-level name (not starting with ``_``), every function and class
defined at module level (private ones too), the attributes of the library's classes (their
methods and class attributes), and private data, for rebinding only. A public value is compared by
identity and by its pickled bytes (in place changes); a function also by its code object, its
defaults and its ``__dict__``. A value that cannot be pickled is compared by identity only. Private
data is compared by identity: memos (a loaded data set, a JavaScript bundle, a dict of results) fill
in place or replace a ``None`` placeholder, so a private name bound to ``None`` at import is not
tracked, nor what a private dict, list or array holds. Not tracked either: submodules, the cache's own
bookkeeping (the private data of :mod:`dpadmm_book.sweep` and of this module) and :data:`NOT_SETTINGS`
(records a kernel writes and no computation reads).

The library's code also reads names it does not define: the builtins and the functions of the packages
it imports (``np.clip``). :func:`outside_changes` lists those that differ from what they held when first
seen — the interpreter's own builtins as this module's import found them, and every loaded module of
the packages the library imports (:data:`_PACKAGES`, minus :data:`_PLUMBING`) or the sweep reaches, as
the library's import or the first sweep that reached them found them.

Only standard-library imports. ``import dpadmm_book`` installs the hook before it imports the library, so
a program that imports the book's package first has every module recorded as its import left it; a library
imported earlier is recorded as it is when ``dpadmm_book`` is imported. The library itself knows nothing of
this: ``import dpadmm_lite`` alone leaves ``sys.meta_path`` as it found it.
"""

from __future__ import annotations

import builtins
import importlib.abc
import importlib.machinery
import operator
import pickle
import sys
import types
from typing import Callable, Iterable

#: Names that are records of what a kernel did, never read by a computation: not settings.
NOT_SETTINGS = {(module, "GLUED") for module in ("dpadmm_book._outputs", "dpadmm_book._book")}  # every value a chapter glued (_book re-exports it)

#: The packages whose state is tracked: the library and the book's instruments (a sweep's task can call both).
_OURS = ("dpadmm_lite", "dpadmm_book")
#: Modules whose private data is the sweep cache's own bookkeeping (keys used, file snapshots).
_BOOKKEEPING = frozenset({"dpadmm_book.sweep", "dpadmm_book.sweep._hashing", "dpadmm_book.sweep._files",
                          "dpadmm_book._state"})
#: module name → {qualified name → (value, fingerprint)} as the module's import left it.
_SNAPSHOTS: dict[str, dict[str, tuple[object, tuple]]] = {}
_MISSING = object()
_UNPICKLABLE = b"\0unpicklable"


def _ours(module_name: str) -> bool:
    """Whether ``module_name`` is the library, the book's package or one of their modules."""
    return module_name.partition(".")[0] in _OURS


def _pickled(value) -> bytes:
    try:
        return pickle.dumps(value, protocol=4)
    except Exception:  # compared by identity only
        return _UNPICKLABLE


def _fingerprint(value, private: bool = False) -> tuple:
    """What a value is now: its identity, and what an in-place change would change (private data:
    its identity alone)."""
    if isinstance(value, types.FunctionType):
        return (id(value), value.__code__, _pickled((value.__defaults__, value.__kwdefaults__)),
                _pickled(value.__dict__) if value.__dict__ else b"")
    if isinstance(value, type) or private:
        return (id(value),)
    return (id(value), _pickled(value))


def _private_data(qualified_name: str, value) -> bool:
    return qualified_name.rpartition(".")[2].startswith("_") and not isinstance(value, (types.FunctionType, type))


def _tracked(module: types.ModuleType) -> dict[str, object]:
    """Qualified name → value of what :func:`changes` compares in ``module``."""
    name = module.__name__
    found: dict[str, object] = {}
    for attribute, value in list(vars(module).items()):
        if attribute.startswith("__") or isinstance(value, types.ModuleType) or (name, attribute) in NOT_SETTINGS:
            continue
        own = getattr(value, "__module__", None) == name
        private_data = attribute.startswith("_") and not (own and isinstance(value, (types.FunctionType, type)))
        if private_data and (value is None or name in _BOOKKEEPING):  # a memo's placeholder, the cache's records
            continue
        found[attribute] = value
        if isinstance(value, type) and own and value.__qualname__ == attribute:
            for member, inner in list(vars(value).items()):
                if not member.startswith("__") and not (member.startswith("_") and inner is None):
                    found[f"{attribute}.{member}"] = inner
    return found


def record(module: types.ModuleType) -> None:
    """Remember what ``module``'s tracked names hold now (its import-time state), and which packages it imports."""
    _SNAPSHOTS[module.__name__] = {k: (v, _fingerprint(v, _private_data(k, v))) for k, v in _tracked(module).items()}
    imported = {value.__name__.partition(".")[0] for value in list(vars(module).values())
                if isinstance(value, types.ModuleType)} - _PACKAGES - _PLUMBING - set(_OURS)
    _PACKAGES.update(imported)
    if _LOADED:  # a submodule loaded on first use: the packages new to the library are as it found them
        _watch(imported)


def record_loaded() -> None:
    """Record every module of the library and the book loaded now (called when ``import dpadmm_book`` has
    imported the library, which imports the algorithms and fills the registry's tables), and
    the modules of the packages they import as they are now."""
    global _LOADED
    for name, module in list(sys.modules.items()):
        if _ours(name) and isinstance(module, types.ModuleType):
            record(module)
    _LOADED = True
    _watch(_PACKAGES)


def changes() -> list[tuple[str, str, object, str]]:
    """``(module, name, value now, how)`` for every tracked name whose value differs from its
    import-time state, sorted; ``how`` is ``"rebound"``, ``"changed in place"``, ``"code"``
    (a function's ``__code__`` swapped), ``"added"`` or ``"removed"`` (value ``None``)."""
    found = []
    for module_name, snapshot in sorted(_SNAPSHOTS.items()):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        now = _tracked(module)
        for name in sorted(set(snapshot) | set(now)):
            value = now.get(name, _MISSING)
            if name not in snapshot:
                if not _private_data(name, value):  # private data appears when a memo fills its placeholder
                    found.append((module_name, name, value, "added"))
                continue
            before, fingerprint = snapshot[name]
            if value is _MISSING:
                found.append((module_name, name, None, "removed"))
            elif value is not before:
                found.append((module_name, name, value, "rebound"))
            else:
                current = _fingerprint(value, _private_data(name, value))
                if current != fingerprint:
                    how = "code" if isinstance(value, types.FunctionType) and current[1] is not fingerprint[1] \
                        else "changed in place"
                    found.append((module_name, name, value, how))
    return found


# ---------------------------------------------------------------------- names the library reads but does not define
#: Packages whose public names kernels and test runners rebind as they run (the hooks and streams of
#: ``sys`` and ``threading``, the filters of ``warnings``): they compute nothing a result holds. The
#: builtins are compared apart (:data:`_BUILTINS`).
_PLUMBING = frozenset({"sys", "threading", "warnings", "builtins"})
#: Top-level packages the library's modules import (``numpy``, ``scipy``, ``math``, …).
_PACKAGES: set[str] = set()
#: module name → what a module outside the library held when first seen, for every loaded module of
#: a watched package.
_OUTSIDE: dict[str, _Seen] = {}
_LOADED = False


def _native(name: str, value) -> bool:
    """Whether a builtin is the interpreter's own: its function or type of that name."""
    if isinstance(value, types.BuiltinFunctionType):
        return value.__self__ is builtins and value.__name__ == name
    return isinstance(value, type) and value.__module__ == "builtins" and value.__name__ == name


#: The interpreter's builtin functions and types as this module's import found them (the
#: builtins a kernel adds, ``exit``, ``get_ipython``, are rebound by it at every cell: not kept).
_BUILTINS = {name: value for name, value in vars(builtins).items() if _native(name, value)}


class _Seen:
    """A module outside the library as first seen: its public names and values, every name it had,
    and (filled on the first comparison) the names whose value was defined outside installed code."""

    __slots__ = ("module", "first", "names", "values", "every_name", "foreign")

    def __init__(self, module: types.ModuleType):
        self.module = module
        namespace = dict(vars(module))
        self.first = {k: v for k, v in namespace.items()
                      if not k.startswith("_") and not isinstance(v, types.ModuleType)}
        self.names, self.values = tuple(self.first), tuple(self.first.values())
        self.every_name = frozenset(namespace)
        self.foreign: list[str] | None = None

    def unchanged(self) -> bool:
        """Whether every public name holds what it held and the namespace has as many names (one pass
        in C: a name added in place of one removed is then a public one removed, which the first test sees,
        or a private one)."""
        now = vars(self.module)
        return len(now) == len(self.every_name) and all(map(operator.is_, map(now.get, self.names), self.values))


def _watch(packages: Iterable[str]) -> list[_Seen]:
    """Record the loaded modules of ``packages`` not recorded yet (or replaced); return the records of
    every loaded module of them."""
    packages = set(packages) - _PLUMBING - set(_OURS)
    found = []
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in packages and isinstance(module, types.ModuleType):
            seen = _OUTSIDE.get(name)
            if seen is None or seen.module is not module:
                seen = _OUTSIDE[name] = _Seen(module)
            found.append(seen)
    return found


def _same(before, value) -> bool:
    """Whether a rebound value equals the first one as plain data (``time.tzname`` set anew by ``tzset``)."""
    try:
        return type(before) is type(value) and type(value) in (int, float, str, bytes, tuple) and bool(before == value)
    except Exception:  # a tuple of arrays
        return False


def outside_changes(packages: Iterable[str], foreign: Callable[[object], bool]) -> list[tuple[str, str, object, str]]:
    """``(module, name, value now, how)`` for what the library's code and a sweep's task read
    outside the library and differs from what it held when first seen, sorted.

    Compared: the interpreter's builtin functions and types (``builtins.round = …``), and the public
    names of every loaded module of :data:`_PACKAGES` and of ``packages`` (the ones a sweep's task
    reaches). ``how`` is ``"rebound"`` or ``"removed"`` (value ``None``) for a name whose value is
    not the one first seen (nor equal plain data); ``"added"`` for a name that had no value then (or
    ``None``) and now holds one that ``foreign`` says was defined outside installed code; ``"foreign"``
    for a value that ``foreign`` says was defined outside installed code and was there when first seen
    (patched in before the library's import), or that is in the builtins under any name.
    """
    found = []
    current = dict(vars(builtins))
    for name, value in _BUILTINS.items():
        now = current.pop(name, _MISSING)
        if now is not value:
            found.append(("builtins", name, None, "removed") if now is _MISSING else ("builtins", name, now, "rebound"))
    found += [("builtins", name, value, "foreign") for name, value in current.items()
              if not name.startswith("_") and foreign(value)]
    for seen in _watch(_PACKAGES | set(packages)):
        module, first = seen.module.__name__, seen.first
        if seen.foreign is None:  # once per module: what was patched in before it was first seen
            seen.foreign = [k for k, v in first.items() if v is not None and foreign(v)]
        now = vars(seen.module)
        found += [(module, name, first[name], "foreign") for name in seen.foreign if now.get(name) is first[name]]
        if seen.unchanged():
            continue
        for name, before in first.items():
            value = now.get(name, _MISSING)
            if value is before or _same(before, value):
                continue
            if before is not None:
                found.append((module, name, None, "removed") if value is _MISSING else (module, name, value, "rebound"))
            elif value is not _MISSING and value is not None and foreign(value):
                found.append((module, name, value, "added"))
        for name in now.keys() - seen.every_name:
            value = now.get(name)
            if not name.startswith("_") and not isinstance(value, types.ModuleType) and foreign(value):
                found.append((module, name, value, "added"))
    return sorted(found, key=lambda change: change[:2])


class _Loader(importlib.abc.Loader):
    """The module's own loader, recording the module's state after it executed."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        record(module)

    def __getattr__(self, name):  # get_resource_reader, get_source, is_package, …
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds the library's submodules as the path finder does, with a recording loader."""

    @staticmethod
    def find_spec(fullname, path=None, target=None):
        if "." not in fullname or not _ours(fullname):  # the submodules (the packages record themselves)
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None and not isinstance(spec.loader, _Loader):
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Record the state of every library module when its import finishes (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())  # an instance: importlib.invalidate_caches() calls its method
