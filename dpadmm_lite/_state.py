"""The library's module-level state as its import left it, and what has changed since.

The sweep cache (:mod:`dpadmm_lite.sweep`) keys a sweep by the library's files. A setting changed
while a kernel runs is not in the files: a module-level dict mutated in place
(``dl.labels.PARAMETER_LABELS["rho"] = …``), a constant rebound, a function monkeypatched (replaced, or its
``__code__`` swapped), a class attribute changed. This module records, when each module of the
library has finished its import (and again when ``import dpadmm_lite`` has finished, which
imports the algorithms and fills the registry's tables), what every tracked name holds; then
:func:`changes` lists the names whose value differs now, and the sweep hashes those by content.

Tracked: every public module-level name (not starting with ``_``), every function and class
defined at module level (private ones too), and the attributes of the library's classes (their
methods and public class attributes). Not tracked: private data (memos such as a loaded data set
or a JavaScript bundle), submodules, and :data:`NOT_SETTINGS` (records a kernel writes and no
computation reads). A value is compared by identity and by its pickled bytes (in place changes);
a function also by its code object, its defaults and its ``__dict__``. A value that cannot be
pickled is compared by identity only.

Only standard-library imports: ``import dpadmm_lite`` loads this first, and stays fast.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import pickle
import sys
import types

#: Names that are records of what a kernel did, never read by a computation: not settings.
NOT_SETTINGS = {(module, "GLUED") for module in ("dpadmm_lite._outputs", "dpadmm_lite._book")}  # every value a chapter glued (_book re-exports it)

_PACKAGE = "dpadmm_lite"
#: module name → {qualified name → (value, fingerprint)} as the module's import left it.
_SNAPSHOTS: dict[str, dict[str, tuple[object, tuple]]] = {}
_MISSING = object()
_UNPICKLABLE = b"\0unpicklable"


def _pickled(value) -> bytes:
    try:
        return pickle.dumps(value, protocol=4)
    except Exception:  # compared by identity only
        return _UNPICKLABLE


def _fingerprint(value) -> tuple:
    """What a value is now: its identity, and what an in-place change would change."""
    if isinstance(value, types.FunctionType):
        return (id(value), value.__code__, _pickled((value.__defaults__, value.__kwdefaults__)),
                _pickled(value.__dict__) if value.__dict__ else b"")
    if isinstance(value, type):
        return (id(value),)
    return (id(value), _pickled(value))


def _tracked(module: types.ModuleType) -> dict[str, object]:
    """Qualified name → value of what :func:`changes` compares in ``module``."""
    name = module.__name__
    found: dict[str, object] = {}
    for attribute, value in list(vars(module).items()):
        if attribute.startswith("__") or isinstance(value, types.ModuleType) or (name, attribute) in NOT_SETTINGS:
            continue
        own = getattr(value, "__module__", None) == name
        if attribute.startswith("_") and not (own and isinstance(value, (types.FunctionType, type))):
            continue
        found[attribute] = value
        if isinstance(value, type) and own and value.__qualname__ == attribute:
            for member, inner in list(vars(value).items()):
                if member.startswith("__") or (member.startswith("_") and not callable(inner)):
                    continue
                found[f"{attribute}.{member}"] = inner
    return found


def record(module: types.ModuleType) -> None:
    """Remember what ``module``'s tracked names hold now (its import-time state)."""
    _SNAPSHOTS[module.__name__] = {k: (v, _fingerprint(v)) for k, v in _tracked(module).items()}


def record_loaded() -> None:
    """Record every module of the library loaded now (called when ``import dpadmm_lite`` finishes)."""
    for name, module in list(sys.modules.items()):
        if (name == _PACKAGE or name.startswith(_PACKAGE + ".")) and isinstance(module, types.ModuleType):
            record(module)


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
                found.append((module_name, name, value, "added"))
                continue
            before, fingerprint = snapshot[name]
            if value is _MISSING:
                found.append((module_name, name, None, "removed"))
            elif value is not before:
                found.append((module_name, name, value, "rebound"))
            else:
                current = _fingerprint(value)
                if current != fingerprint:
                    how = "code" if isinstance(value, types.FunctionType) and current[1] is not fingerprint[1] \
                        else "changed in place"
                    found.append((module_name, name, value, how))
    return found


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
        if not fullname.startswith(_PACKAGE + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None and not isinstance(spec.loader, _Loader):
            spec.loader = _Loader(spec.loader)
        return spec


def install() -> None:
    """Record the state of every library module when its import finishes (idempotent)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())  # an instance: importlib.invalidate_caches() calls its method
