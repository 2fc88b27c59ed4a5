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
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import shutil
import sys
from pathlib import Path

from .toc import ROOT

#: The files besides the notebook that an execution reads: the library (code and data), the
#: build tools that execute and post-process notebooks, and the package's declared dependencies.
INPUTS = ("dpadmm_lite", "tools/bookbuild/stage.py", "tools/bookbuild/progress.py", "pyproject.toml")
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


def cache_dir(out: Path, mode: str) -> Path:
    """Where the build into ``out`` keeps the executed notebooks of ``mode``."""
    return Path(out) / "executed" / mode


def _entry(out: Path, mode: str, source: Path) -> Path:
    return cache_dir(out, mode) / Path(source).stem


def restore(out: Path, mode: str, source: Path, key: str, target: Path, results: Path) -> float | None:
    """Copy the kept execution of ``source`` with ``key`` to ``target`` and its claim records
    into ``results``; the seconds its execution took, or ``None`` when nothing matching is kept."""
    entry = _entry(out, mode, source)
    try:
        meta = json.loads((entry / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    if meta.get("key") != key or not (entry / "executed.ipynb").is_file():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(entry / "executed.ipynb", target)
    for record in sorted((entry / "records").glob("*.json")):
        shutil.copyfile(record, Path(results) / record.name)
    return float(meta.get("seconds", 0.0))


def store(out: Path, mode: str, source: Path, key: str, target: Path, results: Path, seconds: float) -> None:
    """Keep the execution of ``source`` (``target``, executed and post-processed) under ``key``,
    with the claim records it wrote (those in ``results`` whose ``chapter`` is its name)."""
    entry = _entry(out, mode, source)
    shutil.rmtree(entry, ignore_errors=True)
    (entry / "records").mkdir(parents=True)
    shutil.copyfile(target, entry / "executed.ipynb")
    for record in sorted(Path(results).glob("*.json")):
        try:
            chapter = json.loads(record.read_text()).get("chapter")
        except ValueError:
            continue
        if chapter == Path(source).stem:
            shutil.copyfile(record, entry / "records" / record.name)
    (entry / "meta.json").write_text(json.dumps({"key": key, "seconds": round(seconds, 1)}))
