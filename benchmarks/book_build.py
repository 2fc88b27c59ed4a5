"""`make book` as a newcomer meets it: a fresh clone, then the same command again with nothing changed.

    python benchmarks/book_build.py                # clones HEAD of this checkout into a temporary folder
    python benchmarks/book_build.py --keep DIR     # clone into DIR and keep it

Prints the machine's load, the wall time of each phase (the virtualenv, executing the notebooks,
the site), each notebook's time, the sum of the notebooks' times against the execution's wall time
(how well the two workers were used: the floor of a two-worker build is half the sum, or the
longest notebook when that is larger), and the warm rebuild (nothing changed: every notebook's
kept execution is reused, only the site is built). Issue 26's targets: ≤ 10 min fresh, < 1 min warm.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def cpu_seconds() -> float:
    """User and system time of every finished child process (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed after {seconds:.0f} s:\n{(proc.stdout + proc.stderr)[-4000:]}")
    return seconds


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="clone into this folder and keep it")
    args = parser.parse_args(argv)
    base = args.keep or Path(tempfile.mkdtemp(prefix="dpadmm-book-bench-"))
    base.mkdir(parents=True, exist_ok=True)
    repo = base / "repo"
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True)
    shared = ROOT.parent / "shared"
    if shared.exists() and not (base / "shared").exists():
        (base / "shared").symlink_to(shared)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DPADMM_", "VIRTUAL_ENV"))}
    env["PIP_NO_CACHE_DIR"] = env["UV_NO_CACHE"] = "1"  # a fresh machine has no wheel cache
    print(f"load before: {load()}  ({os.cpu_count()} cores), clone of {ROOT} at "
          f"{subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=ROOT, capture_output=True, text=True).stdout.strip()}")
    venv = timed(["make", ".venv/.installed"], repo, env)
    cpu_before = cpu_seconds()
    fresh = timed(["make", "book"], repo, env)
    cpu = cpu_seconds() - cpu_before
    report = json.loads((repo / "_build" / "last-build.json").read_text())
    notebooks = {Path(n["path"]).stem: n["seconds"] for n in report["notebooks"]}
    total = sum(notebooks.values())
    print(f"load after the fresh build: {load()}")
    print(f"fresh clone: make book {venv + fresh:.0f} s = virtualenv {venv:.0f} s + notebooks and site {fresh:.0f} s "
          f"(target ≤ 600 s)")
    for name, seconds in sorted(notebooks.items(), key=lambda item: -item[1]):
        print(f"  {name:<16} {seconds:7.1f} s")
    floor = max(total / 2, max(notebooks.values()))
    print(f"  processor time of make book {cpu:.0f} s = {cpu / fresh:.2f} cores busy on average over its {fresh:.0f} s "
          f"({os.cpu_count()} cores)")
    print(f"  sum of the notebooks {total:.0f} s; a two-worker floor {floor:.0f} s; the build's execution and site "
          f"took {fresh:.0f} s = {fresh / floor:.2f}x that floor")
    warm = timed(["make", "book"], repo, env)
    reused = json.loads((repo / "_build" / "last-build.json").read_text())["notebooks"]
    print(f"warm rebuild, nothing changed: {warm:.0f} s (target < 60 s); "
          f"{sum(bool(n.get('reused')) for n in reused)}/{len(reused)} notebooks reused; load {load()}")
    if args.keep is None:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
