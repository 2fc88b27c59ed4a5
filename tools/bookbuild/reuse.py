"""Reuse of executed notebooks: a rebuild with nothing changed executes nothing.

A notebook's execution depends on its own source, the build mode, the library ``dpadmm_lite``
(code and data), the book's other source files (the bibliography), the tools that execute and
post-process it, the Python and the installed packages, and — for a notebook of a later stage,
such as the reproducibility table — the claim records the earlier chapters wrote. The build hashes
all of these into a key (:func:`fingerprint`). After a notebook executed, its executed copy and
the claim records it wrote are kept under ``<out>/executed/<mode>/`` (:func:`store`); a later
build whose key is the same copies them back instead of executing (:func:`restore`). Any change
to one of the inputs changes the key, and that notebook executes again.

    python tools/build_book.py --mode full --fresh     # execute every notebook, reuse nothing

**Interrupted builds and damaged files.** Every file the build keeps is written to a temporary
file in its folder and renamed into place (:func:`write_atomic`, :func:`copy_atomic`), and a kept
execution's ``meta.json`` — written last — lists the SHA-256 of each of its files. A build killed
at any point therefore leaves either no ``meta.json`` (the notebook executes again) or a complete
entry; a kept file that does not match its digest (truncated, edited, half-copied by something
else), or a ``meta.json`` that does not parse, is reported on the build's output, deleted, and
the notebook executes again (:func:`restore`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .toc import ROOT

#: The files besides the notebook that an execution reads: the library (code and data), the
#: build tools that execute and post-process notebooks, and the package's declared dependencies.
INPUTS = ("dpadmm_lite", "dpadmm_book", "tools/bookbuild/stage.py", "tools/bookbuild/progress.py", "pyproject.toml")
#: Files that are not inputs (caches written by running the code).
SKIP = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}


def _files(path: Path):
    if path.is_file():
        yield path
    elif path.is_dir():
        for item in sorted(path.rglob("*")):
            if item.is_file() and not SKIP.intersection(item.relative_to(path).parts) and item.suffix != ".pyc":
                yield item


def _environment() -> str:
    """The Python and every installed distribution with its version."""
    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
                       if d.metadata["Name"])
    return sys.version + "\n" + "\n".join(installed)


def fingerprint(source: Path, mode: str, results: Path | None = None, root: Path = ROOT) -> str:
    """The key of executing notebook ``source`` in ``mode``: a sha256 over every input (module
    docstring). ``results``: the claim-record folder a later-stage notebook reads (its files are
    inputs too); ``None`` for a notebook that reads none."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    add("mode", mode.encode())
    add("notebook", Path(source).read_bytes())
    add("environment", _environment().encode())
    inputs = [root / p for p in INPUTS]
    inputs += [p for p in sorted(Path(source).parent.iterdir()) if p.is_file() and p.suffix != ".ipynb"]
    for base in inputs:
        for item in _files(base):
            add(item.relative_to(root).as_posix(), item.read_bytes())
    if results is not None:
        for item in _files(Path(results)):
            add(f"results/{item.name}", item.read_bytes())
    return digest.hexdigest()


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write ``path`` whole or not at all: a temporary file in its folder, renamed into place
    (a process killed mid-write leaves the old file, or none, and a stray ``.*.tmp``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data.encode() if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def copy_atomic(source: Path, target: Path) -> None:
    """Copy ``source`` to ``target`` whole or not at all (see :func:`write_atomic`)."""
    write_atomic(target, Path(source).read_bytes())


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cache_dir(out: Path, mode: str) -> Path:
    """Where the build into ``out`` keeps the executed notebooks of ``mode``."""
    return Path(out) / "executed" / mode


def _entry(out: Path, mode: str, source: Path) -> Path:
    return cache_dir(out, mode) / Path(source).stem


def _damaged(entry: Path, meta: dict) -> str:
    """Why the kept entry cannot be trusted, or ``""``: every file ``meta.json`` lists must be
    there with its digest."""
    files = meta.get("files")
    if not isinstance(files, dict) or "executed.ipynb" not in files:
        return "its meta.json lists no file digests (written by an older build)"
    for name, digest in sorted(files.items()):
        path = entry / name
        if Path(name).is_absolute() or ".." in Path(name).parts:
            return f"its meta.json names {name!r}, outside the entry"
        try:
            if _sha256(path) != digest:
                return f"{name} does not match its digest (truncated or changed)"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror or exc})"
    return ""


def _report(message: str) -> None:
    print(message, flush=True)


def restore(out: Path, mode: str, source: Path, key: str, target: Path, results: Path) -> float | None:
    """Copy the kept execution of ``source`` with ``key`` to ``target`` and its claim records
    into ``results``; the seconds its execution took, or ``None`` when nothing matching is kept.
    A damaged entry (a file that does not match the digest ``meta.json`` lists, a ``meta.json``
    that does not parse) is reported, deleted, and ``None`` returned: the notebook executes again."""
    entry = _entry(out, mode, source)
    try:
        text = (entry / "meta.json").read_text()
    except OSError:  # nothing kept, or a store killed before its last step
        return None
    try:
        meta = json.loads(text)
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        problem = f"its meta.json does not parse ({exc})"
    else:
        if meta.get("key") != key:
            return None
        problem = _damaged(entry, meta)
    if problem:
        _report(f"[reuse] the kept execution of {Path(source).name} is damaged: {problem}; executing it again")
        shutil.rmtree(entry, ignore_errors=True)
        return None
    copy_atomic(entry / "executed.ipynb", target)
    for name in sorted(meta["files"]):
        if name.startswith("records/"):
            copy_atomic(entry / name, Path(results) / Path(name).name)
    return float(meta.get("seconds", 0.0))


def store(out: Path, mode: str, source: Path, key: str, target: Path, results: Path, seconds: float) -> None:
    """Keep the execution of ``source`` (``target``, executed and post-processed) under ``key``,
    with the claim records it wrote (those in ``results`` whose ``chapter`` is its name).

    The old entry goes first, the files next (each atomically), ``meta.json`` with their digests
    last: a store killed on the way leaves an entry without ``meta.json``, which is never reused."""
    entry = _entry(out, mode, source)
    shutil.rmtree(entry, ignore_errors=True)
    (entry / "records").mkdir(parents=True)
    files = {}
    data = Path(target).read_bytes()
    write_atomic(entry / "executed.ipynb", data)
    files["executed.ipynb"] = hashlib.sha256(data).hexdigest()
    for record in sorted(Path(results).glob("*.json")):
        data = record.read_bytes()
        try:
            chapter = json.loads(data).get("chapter")
        except (ValueError, AttributeError):
            continue
        if chapter == Path(source).stem:
            write_atomic(entry / "records" / record.name, data)
            files[f"records/{record.name}"] = hashlib.sha256(data).hexdigest()
    write_atomic(entry / "meta.json", json.dumps({"key": key, "seconds": round(seconds, 1), "files": files}))
