"""The sweep cache's key: a task, its grid and everything they reach, hashed by content.

What the key covers and why is the package's docstring (:mod:`dpadmm_book.sweep`); this module computes it:
:class:`_Hasher` digests values, code and classes by content, :func:`_library_fingerprint` the two
packages' files and versions, :func:`_library_state` and :func:`_outside_state` what changed since the
import (:mod:`dpadmm_book._state`), and the memo bookkeeping empties the memos a changed state left stale.
"""

from __future__ import annotations

import contextlib
import dis
import enum
import functools
import hashlib
import inspect
import os
import pathlib
import re
import sys
import sysconfig
import types
import weakref
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import dpadmm_lite

from .. import _state


# ---------------------------------------------------------------------- the key: values by content
class _Unhashable(TypeError):
    """A value the task reads cannot be hashed by content."""


def _h(tag: str, *parts) -> bytes:
    """SHA-256 of a tag and length-prefixed parts (bytes, or anything ``str`` spells exactly)."""
    h = hashlib.sha256()
    for part in (tag, *parts):
        if isinstance(part, memoryview):
            h.update(part.nbytes.to_bytes(8, "little"))
        else:
            part = part if isinstance(part, (bytes, bytearray)) else str(part).encode("utf-8", "surrogatepass")
            h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.digest()


def _installed_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    with contextlib.suppress(Exception):
        import site

        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    return tuple(sorted(os.path.realpath(r) + os.sep for r in roots if r))


_INSTALLED = _installed_roots()


@functools.lru_cache(maxsize=None)
def _origin(module_name: str) -> str:
    """``"library"`` (dpadmm_lite: its files are in the key), ``"installed"`` (stdlib or
    site-packages: counted by name and version) or ``"user"`` (a notebook, a script, a module
    next to them: hashed by content)."""
    top = module_name.partition(".")[0]
    if top in _state._OURS:
        return "library"
    if not module_name or module_name == "__main__":
        return "user"
    if top in sys.stdlib_module_names or module_name in sys.builtin_module_names:
        return "installed"
    module = sys.modules.get(module_name) or sys.modules.get(top)
    file = getattr(module, "__file__", None) if module is not None else None
    if file is None:
        return "user" if module is None else "installed"
    return "installed" if os.path.realpath(file).startswith(_INSTALLED) else "user"


def _version(module_name: str) -> str:
    top = module_name.partition(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return "python " + ".".join(map(str, sys.version_info[:3]))
    return str(getattr(sys.modules.get(top), "__version__", ""))


@functools.lru_cache(maxsize=4096)
def _global_names(code: types.CodeType) -> tuple[str, ...]:
    """Names a code object (and the functions, lambdas and comprehensions inside it) reads as globals."""
    names = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and instruction.argval not in names:
            names.append(instruction.argval)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names += [n for n in _global_names(const) if n not in names]
    return tuple(names)


def _codes(code: types.CodeType):
    """A code object and every code object inside it (functions, lambdas, comprehensions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


#: Names through which code reads the process environment.
_ENVIRONMENT_NAMES = frozenset({"environ", "environb", "getenv", "getenvb"})


@functools.lru_cache(maxsize=4096)
def _reads_environment(code: types.CodeType) -> bool:
    """Whether the code names ``os.environ``/``os.getenv`` (or reads them as globals)."""
    return any(_ENVIRONMENT_NAMES.intersection(c.co_names) for c in _codes(code))


_random_module = __import__("random")
#: The functions of numpy's legacy global generator (``np.random.normal``, ``np.random.seed``, …)
#: and of the standard library's (``random.random``, ``random.seed``, …): they read and advance a
#: state shared by the whole process, which no key can see.
_LEGACY_RNG = frozenset(
    {n for n in dir(np.random) if getattr(getattr(np.random, n, None), "__self__", None) is np.random.mtrand._rand}
    | {n for n in dir(_random_module) if getattr(getattr(_random_module, n, None), "__self__", None)
       is getattr(_random_module, "_inst", None)}
    | {"seed", "sample", "ranf", "get_state", "set_state", "getstate", "setstate"})
_RNG_MESSAGE = ("it draws from the process's global random generator (numpy's legacy np.random.<function> or the "
                "random module), whose state the key cannot see and which makes the results depend on what ran "
                "before: draw from np.random.default_rng(seed) instead")


_RNG_MODULES = ("random", "numpy.random")
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF")


@functools.lru_cache(maxsize=4096)
def _reads_global_rng(code: types.CodeType, aliases: frozenset) -> bool:
    """Whether the code calls a legacy global-generator function: an attribute ``random`` then one
    of :data:`_LEGACY_RNG` (``np.random.normal``); a global in ``aliases`` (the names bound to
    ``numpy.random`` or the ``random`` module: ``random.gauss``, ``npr.normal``) or a local bound by
    an import inside the code (``import random``) then one of them; or an import of one of them
    (``from numpy.random import normal`` inside the code)."""
    for c in _codes(code):
        previous, imported, local = None, None, set()
        for instruction in dis.get_instructions(c):
            op, arg = instruction.opname, instruction.argval
            if op == "IMPORT_NAME":
                imported = arg
            elif op == "IMPORT_FROM":
                if imported in _RNG_MODULES and arg in _LEGACY_RNG:
                    return True
                imported = f"{imported}.{arg}"
            elif op in _STORES and imported is not None:
                if imported in _RNG_MODULES:
                    local.add(arg)
                imported = None
            elif (previous is not None and op in ("LOAD_ATTR", "LOAD_METHOD") and arg in _LEGACY_RNG
                    and ((previous.opname in ("LOAD_ATTR", "LOAD_METHOD") and previous.argval == "random")
                         or (previous.opname in ("LOAD_GLOBAL", "LOAD_NAME") and previous.argval in aliases)
                         or (previous.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_NAME")
                             and previous.argval in local))):
                return True
            previous = instruction
    return False


def _global_rng(obj) -> bool:
    """Whether ``obj`` is a function of a global generator (``from numpy.random import normal``)."""
    owner = getattr(obj, "__self__", None)
    if owner is not None and (owner is np.random.mtrand._rand or owner is getattr(_random_module, "_inst", None)):
        return True
    return obj is np.random.seed or obj is np.random.mtrand._rand


_MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


@functools.lru_cache(maxsize=4096)
def _imported_modules(code: types.CodeType) -> tuple[str, ...]:
    """Module names the code imports (``import helpers`` inside a function) or spells in a string
    constant (``importlib.import_module("helpers")``); the loaded ones among them are hashed."""
    names = []
    for c in _codes(code):
        for instruction in dis.get_instructions(c):
            if instruction.opname == "IMPORT_NAME" and instruction.argval not in names:
                names.append(instruction.argval)
        names += [const for const in c.co_consts
                  if isinstance(const, str) and _MODULE_NAME.fullmatch(const) and const not in names]
    return tuple(names)


_DESCRIPTORS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType,
                types.GetSetDescriptorType, types.MemberDescriptorType)
#: Entries of a class's __dict__ that describe its layout rather than its behaviour.
_CLASS_LAYOUT = {"__dict__", "__weakref__", "__module__", "__qualname__", "__doc__", "_abc_impl",
                 "__dataclass_fields__", "__dataclass_params__", "__match_args__", "__annotations__",
                 "__parameters__", "__orig_bases__", "__slots__"}
_MAX_DEPTH = 120


class _Hasher:
    """Content digests of values (Merkle style: a container's digest is that of its parts'),
    the same in every process: no ``id``, no address, no set or hash-seed order."""

    def __init__(self, env: Sequence[str] | None = None):
        #: the environment variables the task declared it reads (``grid(..., env=…)``), or None
        self._env = None if env is None else tuple(env)
        self._memo: dict[int, bytes] = {}
        self._alive: list = []  # keeps hashed objects alive so that their ids stay theirs
        self._active: dict[int, int] = {}
        self._path: list[str] = []
        #: top-level names of the installed packages reached (their names are compared, see _outside_state)
        self.packages: set[str] = set()
        #: (holder, attribute, digest of what fills it) of the memos reached: an lru_cache'd helper outside
        #: installed code and the library (attribute None), a cached_property of an object whose class is
        #: not installed code
        self.memos: list[tuple[object, str | None, bytes]] = []
        #: digest of the library's state and of the names it and the task read outside it (set by _key)
        self.state = b""

    def _installed(self, module_name: str) -> str:
        """The version of an installed package reached; its names are compared as well."""
        self.packages.add(module_name.partition(".")[0])
        return _version(module_name)

    def digest(self, value, label: str | None = None) -> bytes:
        if label is not None:
            self._path.append(label)
        try:
            return self._value(value)
        except RecursionError:
            raise self._fail(value, "it is nested too deeply") from None
        finally:
            if label is not None:
                self._path.pop()

    def _environment(self, value) -> bytes:
        """A read of ``os.environ``: the declared variables' values, or the task runs uncached."""
        if self._env is None:
            raise self._fail(value, "it reads the environment (os.environ or os.getenv), which the key does not "
                                    "see unless the sweep declares the variables it reads: grid(..., env=(\"NAME\",))")
        return _h("environment", *(p for v in sorted(set(self._env)) for p in (v, repr(os.environ.get(v)))))

    def _fail(self, value, why: str) -> _Unhashable:
        where = " → ".join(self._path) or "a value"
        return _Unhashable(f"{where} (a {type(value).__module__}.{type(value).__qualname__}) cannot be hashed by "
                           f"content: {why}")

    # ------------------------------------------------------------------ dispatch
    def _value(self, obj) -> bytes:
        if obj is None or obj is Ellipsis or obj is NotImplemented:
            return _h("const", repr(obj))
        t = type(obj)
        if t is bool:
            return _h("bool", int(obj))
        if t is int:
            return _h("int", hex(obj))
        if t is float:
            return _h("float", obj.hex())
        if t is complex:
            return _h("complex", obj.real.hex(), obj.imag.hex())
        if t is str:
            return _h("str", obj)
        if t is bytes or t is bytearray:
            return _h(t.__name__, bytes(obj))
        if isinstance(obj, np.generic) and not obj.dtype.hasobject:
            return _h("numpy scalar", np.lib.format.dtype_to_descr(obj.dtype), obj.tobytes())
        if isinstance(obj, type):  # its own memo and cycle marks: marked here first, it read as a cycle
            return self._type(obj)
        key = id(obj)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:  # a cycle: say how far up it points (the same in every process)
            return _h("cycle", len(self._active) - self._active[key])
        if len(self._active) > _MAX_DEPTH:
            raise self._fail(obj, "it is nested too deeply")
        self._active[key] = len(self._active)
        self._alive.append(obj)
        try:
            digest = self._composite(obj)
        finally:
            del self._active[key]
        self._memo[key] = digest
        return digest

    def _composite(self, obj) -> bytes:
        t = type(obj)
        if isinstance(obj, enum.Enum):
            return _h("enum", self._type(t), obj.name, self.digest(obj.value, ".value"))
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.dtype):
            return _h("dtype", np.lib.format.dtype_to_descr(obj))
        if isinstance(obj, (pd.DataFrame, pd.Series, pd.Index)):
            return self._pandas(obj)
        if "scipy.sparse" in sys.modules and sys.modules["scipy.sparse"].issparse(obj):
            csr = obj.tocsr(copy=True)
            csr.sum_duplicates()
            csr.sort_indices()
            return _h("sparse", self._type(t), csr.shape, self._array(csr.data), self._array(csr.indices),
                      self._array(csr.indptr))
        if isinstance(obj, (tuple, list)):
            kind = "list" if isinstance(obj, list) else "tuple"
            head = (kind, self._type(t) if t not in (tuple, list) else kind)
            return _h(*head, *(self.digest(item, f"[{i}]") for i, item in enumerate(obj)))
        if isinstance(obj, (dict, types.MappingProxyType)):
            extra = (self.digest(obj.default_factory, ".default_factory"),) if hasattr(obj, "default_factory") else ()
            items = [(self.digest(k, "a key"), self.digest(v, f"[{k!r}]" if type(k) in (str, int) else "an item"))
                     for k, v in obj.items()]
            return _h("dict", self._type(t) if t is not dict else "dict", *extra, *(p for kv in items for p in kv))
        if isinstance(obj, (set, frozenset)):
            return _h("set", t.__name__, *sorted(self.digest(item, "an element") for item in obj))
        if isinstance(obj, (range, slice)):
            return _h(t.__name__, self.digest(obj.start), self.digest(obj.stop), self.digest(obj.step))
        if isinstance(obj, pathlib.PurePath):
            return _h("path", t.__name__, str(obj))
        if isinstance(obj, types.ModuleType):
            return self._module(obj)
        if obj is os.environ or obj is os.environb or obj is os.getenv:
            return self._environment(obj)
        if _global_rng(obj):
            raise self._fail(obj, _RNG_MESSAGE)
        if isinstance(obj, types.FunctionType):
            return self._function(obj)
        if isinstance(obj, types.MethodType):
            return _h("method", self.digest(obj.__func__, f"{obj.__func__.__qualname__}"),
                      self.digest(obj.__self__, "its object"))
        if isinstance(obj, functools.partial):
            return _h("partial", self.digest(obj.func, "partial function"), self.digest(obj.args, "partial arguments"),
                      self.digest(obj.keywords, "partial keywords"), self.digest(getattr(obj, "__dict__", {})))
        if t.__name__ == "_lru_cache_wrapper" and hasattr(obj, "__wrapped__"):
            # the cache's contents are derived from the wrapped function: only that counts, and grid empties
            # a memo filled under other values before it runs (_empty_stale_memos)
            reads = self.digest(obj.__wrapped__, "lru_cache function")
            if _user_defined(obj.__wrapped__):
                self.memos.append((obj, None, reads))
            return _h("lru_cache", str(obj.cache_parameters()), reads)
        if isinstance(obj, (staticmethod, classmethod)):
            return _h(t.__name__, self.digest(obj.__func__))
        if isinstance(obj, property):
            return _h("property", self.digest(obj.fget), self.digest(obj.fset), self.digest(obj.fdel))
        if isinstance(obj, functools.cached_property):
            return _h("cached_property", self.digest(obj.func))
        if isinstance(obj, types.CodeType):
            return self._code(obj)
        if isinstance(obj, types.BuiltinFunctionType):
            owner = obj.__self__
            if owner is None or isinstance(owner, types.ModuleType):
                module = getattr(obj, "__module__", None) or getattr(owner, "__name__", "") or ""
                return _h("builtin", module, obj.__qualname__, self._installed(module))
            return _h("builtin method", obj.__name__, self.digest(owner, "its object"))
        if isinstance(obj, types.MethodWrapperType):
            return _h("method-wrapper", obj.__name__, self.digest(obj.__self__, "its object"))
        if isinstance(obj, _DESCRIPTORS):
            return _h("descriptor", self._type(obj.__objclass__), obj.__name__)
        if isinstance(obj, np.ufunc):
            return _h("ufunc", obj.__name__, self._installed("numpy"))
        return self._object(obj)

    # ------------------------------------------------------------------ data
    def _array(self, a: np.ndarray) -> bytes:
        head = ("ndarray", self._type(type(a)) if type(a) is not np.ndarray else "", a.shape)
        if a.dtype == object:
            return _h(*head, "object", *(self.digest(x, f"[{i}]") for i, x in enumerate(a.reshape(-1))))
        if a.dtype.hasobject:
            raise self._fail(a, "a structured dtype with Python objects inside")
        extra = (self._array(np.ma.getmaskarray(a)),) if isinstance(a, np.ma.MaskedArray) else ()
        a = np.ascontiguousarray(a)
        try:
            data = memoryview(a).cast("B")
        except (TypeError, ValueError):  # dtypes the buffer protocol does not export (datetime64, …)
            data = a.tobytes()
        return _h(*head, np.lib.format.dtype_to_descr(a.dtype), data, *extra)

    def _values(self, values, dtype) -> bytes:
        """A pandas column's or index's values, with its dtype."""
        if isinstance(dtype, pd.CategoricalDtype):
            return _h("categorical", self._array(np.asarray(values.codes)),
                      self._pandas(dtype.categories), int(bool(dtype.ordered)))
        if isinstance(dtype, np.dtype):
            return _h("values", self._array(np.asarray(values)))
        return _h("values", str(dtype), self._array(np.asarray(values, dtype=object)))

    def _pandas(self, obj) -> bytes:
        if isinstance(obj, pd.DataFrame):
            return _h("DataFrame", self._type(type(obj)), self._pandas(obj.columns), self._pandas(obj.index),
                      *(self.digest(obj.iloc[:, i], f"column {c!r}") for i, c in enumerate(obj.columns)),
                      self.digest(dict(obj.attrs), "attrs"))
        if isinstance(obj, pd.Series):
            return _h("Series", self._type(type(obj)), self.digest(obj.name, "name"), str(obj.dtype),
                      self._pandas(obj.index), self._values(obj.array, obj.dtype))
        if isinstance(obj, pd.MultiIndex):
            return _h("MultiIndex", self.digest(list(obj.names), "names"),
                      *(self._pandas(level) for level in obj.levels), *(self._array(np.asarray(c)) for c in obj.codes))
        return _h("Index", self._type(type(obj)), self.digest(obj.name, "name"), str(obj.dtype),
                  self._values(obj.array if not isinstance(obj.dtype, pd.CategoricalDtype) else obj.values, obj.dtype))

    # ------------------------------------------------------------------ code
    def _module(self, module: types.ModuleType) -> bytes:
        name = module.__name__
        origin = _origin(name)
        if origin == "library":
            return _h("module", name)
        if origin == "installed":
            return _h("module", name, self._installed(name))
        file = getattr(module, "__file__", None)
        try:
            source = Path(file).read_bytes() if file else b""
        except OSError:
            source = b""
        # and what its names hold now, by value: a global of the module changed after its import
        # (``helpers.SCALE = 2``) counts, however the task reaches it (``helpers.SCALE``,
        # ``getattr(importlib.import_module("helpers"), "SCALE")``)
        parts = []
        for attribute, value in sorted(vars(module).items()):
            if not (attribute.startswith("__") and attribute.endswith("__")):
                parts += [attribute, self.digest(value, f"{name}.{attribute}")]
        return _h("module", name, source, *parts)

    def _type(self, cls: type) -> bytes:
        module, name = getattr(cls, "__module__", "") or "", cls.__qualname__
        origin = _origin(module)
        if origin != "user":
            return _h("class", module, name, self._installed(module) if origin == "installed" else "")
        key = id(cls)
        if key in self._memo:
            return self._memo[key]
        if key in self._active:
            return _h("cycle", len(self._active) - self._active[key])
        self._active[key] = len(self._active)
        self._alive.append(cls)
        try:
            parts = [self._type(base) for base in cls.__bases__]
            for attribute, value in sorted(vars(cls).items()):
                if attribute not in _CLASS_LAYOUT and not isinstance(value, _DESCRIPTORS):
                    parts += [attribute, self.digest(value, f"{cls.__qualname__}.{attribute}")]
            digest = _h("user class", module, name, *parts)
        finally:
            del self._active[key]
        self._memo[key] = digest
        return digest

    def _code(self, code: types.CodeType) -> bytes:
        return _h("code", code.co_name, code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                  code.co_flags, code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
                  *(self.digest(const) for const in code.co_consts))

    def _function(self, fn: types.FunctionType) -> bytes:
        # where its code runs, not its __module__ (functools.wraps copies that from the function a
        # wrapper wraps: the registry's argument checks wrap notebook functions too)
        module, name = fn.__globals__.get("__name__", fn.__module__) or "", fn.__qualname__
        origin = _origin(module)
        if origin == "installed":
            return _h("function", module, name, self._installed(module))
        parts = [self.digest(fn.__defaults__, f"defaults of {name}"),
                 self.digest(fn.__kwdefaults__, f"keyword-only defaults of {name}")]
        for variable, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                content = cell.cell_contents
            except ValueError:  # not yet assigned
                parts += [variable, _h("empty cell")]
            else:
                parts += [variable, self.digest(content, f"closure variable {variable!r} of {name}")]
        if origin == "library":  # its code and module globals: the library fingerprint
            return _h("library function", module, name, *parts)
        parts.append(self._code(fn.__code__))
        namespace, builtins = fn.__globals__, fn.__builtins__
        if _reads_environment(fn.__code__):
            parts.append(self._environment(fn))
        aliases = {v for v in _global_names(fn.__code__)
                   if namespace.get(v) is np.random or namespace.get(v) is _random_module}
        if _reads_global_rng(fn.__code__, frozenset(aliases)):
            raise self._fail(fn, _RNG_MESSAGE)
        for imported in _imported_modules(fn.__code__):  # `import helpers` inside it, import_module("helpers")
            module = sys.modules.get(imported)
            if isinstance(module, types.ModuleType) and _origin(imported) == "user" and imported != "__main__":
                parts += [imported, self.digest(module, f"module {imported!r} imported by {name}")]
        for variable in _global_names(fn.__code__):
            if variable in namespace:
                parts += [variable, self.digest(namespace[variable], f"global {variable!r} read by {name}")]
            elif variable in builtins:  # by value: builtins.round = … or builtins.SCALE = … counts
                parts += [variable, self.digest(builtins[variable], f"builtin {variable!r} read by {name}")]
            else:
                parts += [variable, _h("undefined name")]
        if fn.__dict__:
            parts.append(self.digest(dict(fn.__dict__), f"attributes of {name}"))
        return _h("function", module, name, *parts)

    # ------------------------------------------------------------------ any other object
    def _object(self, obj) -> bytes:
        cls = type(obj)
        try:
            reduced = obj.__reduce_ex__(4)
        except Exception as exc:
            raise self._fail(obj, f"it cannot be pickled ({type(exc).__name__}: {exc})") from None
        if isinstance(reduced, str):  # a module-level singleton, by name
            return _h("named object", cls.__module__, reduced)
        if not isinstance(reduced, tuple) or len(reduced) < 2:
            raise self._fail(obj, f"its __reduce_ex__ returned {type(reduced).__name__}")
        constructor, args, state, items, pairs = (tuple(reduced) + (None,) * 5)[:5]
        derived = _cached_properties(cls)
        if isinstance(state, dict):
            state = self._state(cls, state, derived)
        elif isinstance(state, tuple) and len(state) == 2 and all(s is None or isinstance(s, dict) for s in state):
            state = tuple(None if s is None else self._state(cls, s, derived) for s in state)
        origin = _origin(cls.__module__ or "")
        attributes = ()
        if origin != "installed" and _own_pickling(cls):
            # its pickle holds what its __getstate__ or __reduce__ chose, its methods read the object: its
            # attributes count too (an installed class's pickle is trusted to hold what its code reads)
            attributes = (self.digest(self._state(cls, _attributes(obj), derived), f"{cls.__qualname__} attributes"),)
        digest = _h("object", self._type(cls), self.digest(constructor, "its constructor"),
                    self.digest(args, f"{cls.__qualname__} arguments"), self.digest(state, f"{cls.__qualname__} state"),
                    self.digest(None if items is None else list(items), f"{cls.__qualname__} items"),
                    self.digest(None if pairs is None else dict(pairs), f"{cls.__qualname__} items"), *attributes)
        if origin != "installed" and getattr(obj, "__dict__", None) is not None:
            # its cached properties are memos of the object and its class (this digest): grid empties one
            # filled under other values (_empty_stale_memos)
            self.memos += [(obj, attribute, digest) for attribute in derived]
        return digest

    @staticmethod
    def _state(cls: type, state: dict, derived: Mapping[str, object]) -> dict:
        """An object's attributes without the ones derived from the others: the values of its
        ``cached_property`` attributes and, for the library's classes, its private attributes
        (memoised results such as a problem's reference optimum, working buffers)."""
        library = _origin(cls.__module__ or "") == "library"
        return {k: v for k, v in state.items() if k not in derived and not (library and str(k).startswith("_"))}


#: The methods through which a class chooses what its pickle holds.
_PICKLING = ("__reduce_ex__", "__reduce__", "__getstate__")


def _own_pickling(cls: type) -> bool:
    """Whether ``cls`` (or a base other than ``object``) chooses what its pickle holds."""
    return any(getattr(cls, method, None) is not getattr(object, method) for method in _PICKLING)


def _attributes(obj) -> dict:
    """An object's instance attributes: its ``__dict__`` and the slots that are set."""
    found = dict(getattr(obj, "__dict__", None) or {})
    for klass in type(obj).__mro__:
        slots = vars(klass).get("__slots__", ())
        for slot in [slots] if isinstance(slots, str) else slots:
            if slot.startswith("__") and not slot.endswith("__"):  # stored under its mangled name
                slot = f"_{klass.__name__.lstrip('_')}{slot}"
            descriptor = vars(klass).get(slot)
            if isinstance(descriptor, types.MemberDescriptorType):
                with contextlib.suppress(AttributeError):  # a slot never set
                    found[slot] = descriptor.__get__(obj, klass)
    return found


def _cached_properties(cls: type) -> dict[str, functools.cached_property]:
    """Name → ``cached_property`` of a class (the one its instances resolve: the first along the MRO)."""
    found: dict[str, object] = {}
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            found.setdefault(name, value)
    return {name: value for name, value in found.items() if isinstance(value, functools.cached_property)}


def _user_defined(value) -> bool:
    """Whether ``value`` was defined outside installed code and the library (in a notebook, a script,
    a module next to them): a function by where its code runs, a class by its module, a bound method or
    a ``functools.partial`` by its function, any other object by its class."""
    if type(value) in _PLAIN:
        return False
    while isinstance(value, (types.MethodType, functools.partial)):
        value = value.__func__ if isinstance(value, types.MethodType) else value.func
    if isinstance(value, types.FunctionType):
        module = value.__globals__.get("__name__", value.__module__) or ""
        if module not in sys.modules:  # its module is gone (or never was one): where its code is
            return not os.path.realpath(value.__code__.co_filename).startswith(_INSTALLED)
    else:  # a class's, an extension function's or an instance's own __module__, else its class's
        module = getattr(value, "__module__", None)
        if not isinstance(module, str):
            module = type(value).__module__
        if module.partition(".")[0] not in sys.modules:  # named after no loaded module: an extension's
            return False
    return _origin(module) == "user"


#: Types whose values are data, never code of a notebook's.
_PLAIN = frozenset({type(None), bool, int, float, complex, str, bytes, tuple, list, dict, set, frozenset})


def _unwrapped(function):
    """The function a ``functools.wraps`` wrapper (the registry's argument checks) wraps."""
    return inspect.unwrap(function) if callable(function) else function


#: Roots of the packages whose files the key covers: the library and the book's instruments (a module
#: constant so that tests can point it elsewhere).
_LIBRARY_ROOTS: tuple[Path, ...] = (Path(dpadmm_lite.__file__).parent, Path(__file__).parents[1])
#: The packages' files as this process imported them (roots → digest): the key describes the code
#: that runs, even if the files change on disk later (a kernel keeps the modules it imported).
_LIBRARY_SNAPSHOT: dict[tuple[Path, ...], bytes] = {}


def _library_files(roots: tuple[Path, ...]) -> bytes:
    """Digest of every file of the packages under ``roots`` (code and shipped data; no caches)."""
    h = hashlib.sha256()
    for root in roots:
        for path in sorted(root.rglob("*")):
            relative = path.relative_to(root)
            if (any(p.startswith(".") or p == "__pycache__" for p in relative.parts) or path.suffix in (".pyc", ".pyo")
                    or not path.is_file()):
                continue
            with contextlib.suppress(OSError):  # a file deleted while we list
                h.update(_h("file", root.name, relative.as_posix(), path.read_bytes()))
    return h.digest()


def _library_changed() -> bool:
    """Whether the packages' files differ from the ones this process imported (then a result
    computed by the imported code must not be stored under the key of the code on disk)."""
    return _LIBRARY_ROOTS in _LIBRARY_SNAPSHOT and _library_files(_LIBRARY_ROOTS) != _LIBRARY_SNAPSHOT[_LIBRARY_ROOTS]


def _library_fingerprint() -> bytes:
    """Digest of the library: its files as this process imported them, its version, the Python
    and numerical-stack versions, and algorithms registered from outside the library (their
    code and values, by content)."""
    import scipy

    from dpadmm_lite import __version__
    from dpadmm_lite import registry

    if _LIBRARY_ROOTS not in _LIBRARY_SNAPSHOT:
        _LIBRARY_SNAPSHOT[_LIBRARY_ROOTS] = _library_files(_LIBRARY_ROOTS)
    h = hashlib.sha256(_LIBRARY_SNAPSHOT[_LIBRARY_ROOTS])
    h.update(_h("versions", __version__, sys.version_info[:3], np.__version__, scipy.__version__, pd.__version__))
    outside = [(name, info) for name, info in sorted(registry._REGISTRY.items())
               if _origin(getattr(_unwrapped(info.function), "__module__", "") or "") != "library"]
    if outside:
        h.update(_Hasher().digest(outside, "algorithms registered outside the library"))
    return h.digest()



def _library_state(hasher: _Hasher) -> bytes:
    """Digest of what the library's modules hold now that their import did not leave there
    (:mod:`dpadmm_book._state`): a setting mutated in place or rebound, a function replaced or
    its code swapped, by content; nothing (a constant) when the library is as imported."""
    parts = []
    for module, name, value, how in _state.changes():
        label = f"{module}.{name} ({how} since the library's import)"
        parts += [module, name, how, hasher.digest(value, label)]
        if how == "code":  # a library function hashes by name (its file): its swapped code by content
            parts.append(hasher._code(value.__code__))
    return _h("library state", *parts)


def _outside_state(hasher: _Hasher) -> bytes:
    """Digest of what the library's code and the task read outside the library that differs from
    what it held when first seen (:func:`dpadmm_book._state.outside_changes`): a builtin rebound or a
    notebook's function put in the builtins, a function of numpy or of another installed package the
    library imports or the task reached monkeypatched (``np.clip = …``), by content; nothing when all
    are as first seen."""
    parts = []
    for module, name, value, how in _state.outside_changes(sorted(hasher.packages), _user_defined):
        label = f"{module}.{name} ({how})"
        if isinstance(value, types.MethodType) and not _user_defined(value):
            # an installed object's method (a kernel's builtins.input): by its function and class, not by
            # the object's state (a kernel's sockets)
            parts += [module, name, how, hasher.digest(value.__func__, label), hasher._type(type(value.__self__))]
        else:
            parts += [module, name, how, hasher.digest(value, label)]
    return _h("outside state", *parts)


# ---------------------------------------------------------------------- memos
#: The process state (library, builtins, packages) when nothing differs from what the import found.
_AS_IMPORTED = _h("process state", _h("library state"), _h("outside state"))
#: The process state under which the library's own memos were last emptied (or filled, from the import on).
_LIBRARY_MEMOS_FILLED_UNDER = [_AS_IMPORTED]
#: Per memo a sweep ran with: (id of its holder, attribute) → (weak reference to the holder, digest of
#: what fills it, its fill marker after the sweep ran).
_MEMOS: dict[tuple[int, str | None], tuple] = {}
_ABSENT = object()


def _fill_marker(holder, attribute):
    """What changes when a memo gains an entry: an lru_cache's (size, misses, hits), a cached
    property's value (compared by identity: the record keeps it alive)."""
    if attribute is None:
        info = holder.cache_info()
        return info.currsize, info.misses, info.hits
    return (getattr(holder, "__dict__", None) or {}).get(attribute, _ABSENT)


def _unchanged(marker, before, attribute) -> bool:
    if attribute is not None:
        return marker is before
    # no entry added (the same size and misses), and not emptied and refilled (which restarts the hits at 0)
    return marker[:2] == before[:2] and marker[2] >= before[2]


def _empty_stale_memos(hasher: _Hasher) -> None:
    """Before a sweep runs for the cache, empty every memo whose entries may have been computed from
    other values than the ones its key holds: the sweep would write them under this key.

    A memo the task reaches (an ``lru_cache``'d helper outside installed code and the library, the
    ``cached_property`` of an object whose class is not installed code) is kept only if the last sweep
    that ran with it saw the same values (the helper's code and globals, or the object and its class;
    and the process state) and it gained no entry since; any other is emptied, one filled in a cell
    before any sweep saw it included. The library's own ``lru_cache`` memos are emptied when the
    library's state, or what it reads outside itself, differs from the last sweep's (from the
    import's, before the first)."""
    for holder, attribute, reads in hasher.memos:
        marker = _fill_marker(holder, attribute)
        if (marker[0] == 0) if attribute is None else marker is _ABSENT:
            continue  # empty
        seen = _MEMOS.get((id(holder), attribute))
        if (seen is None or seen[0]() is not holder or seen[1] != _h("memo", reads, hasher.state)
                or not _unchanged(marker, seen[2], attribute)):
            if attribute is None:
                holder.cache_clear()
            else:
                holder.__dict__.pop(attribute, None)
    if hasher.state != _LIBRARY_MEMOS_FILLED_UNDER[0]:
        for memo in _library_memos():
            memo.cache_clear()
        _LIBRARY_MEMOS_FILLED_UNDER[0] = hasher.state


def _remember_memos(hasher: _Hasher) -> None:
    """After a sweep ran: what each memo it reached was filled under, for the next sweep's check."""
    for holder, attribute, reads in hasher.memos:
        where = (id(holder), attribute)
        try:
            ref = weakref.ref(holder, lambda _, where=where: _MEMOS.pop(where, None))
        except TypeError:  # no weak reference to it: emptied before every sweep that runs with it
            continue
        _MEMOS[where] = (ref, _h("memo", reads, hasher.state), _fill_marker(holder, attribute))


def _library_memos():
    """The library's ``lru_cache`` memos, module-level and in its classes (not the sweep's own, which
    memoise facts about code objects and module names)."""
    for name, module in list(sys.modules.items()):
        if (not isinstance(module, types.ModuleType) or _origin(name) != "library"
                or name == "dpadmm_book.sweep" or name.startswith("dpadmm_book.sweep.")):
            continue
        for value in list(vars(module).values()):
            inner = list(vars(value).values()) if isinstance(value, type) and value.__module__ == name else []
            for memo in [value, *inner]:
                memo = memo.__func__ if isinstance(memo, (staticmethod, classmethod)) else memo
                if type(memo).__name__ == "_lru_cache_wrapper" and hasattr(memo, "cache_clear"):
                    yield memo


_LIBRARY_SNAPSHOT[_LIBRARY_ROOTS] = _library_files(_LIBRARY_ROOTS)
