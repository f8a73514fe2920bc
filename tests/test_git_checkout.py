"""The project folder is found as git finds the checkout, without starting git."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_evaltasks.engine.checkout import GIT_DISCOVERY_VARIABLES, checkout_top

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.com")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def gits_answer(path: Path) -> Path | None:
    """What `git rev-parse --show-toplevel` says for `path`'s folder; None outside a checkout."""
    folder = path
    while not folder.is_dir():
        folder = folder.parent
    top = git(folder, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


@pytest.fixture
def repos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with a nested checkout, a worktree, `.git` entries that are no repository (an
    empty folder, a folder with only `HEAD`, a file that is no link), a link to a missing
    repository, and a folder outside every checkout (unless `tmp_path` is in one)."""
    for name in GIT_DISCOVERY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    outer = tmp_path / "outer"
    (outer / "src" / "deep").mkdir(parents=True)
    git(outer, "init", "-q")
    (outer / "src" / "file.py").write_text("x = 1\n")
    git(outer, "add", "-A")
    git(outer, "commit", "-qm", "first")
    inner = outer / "vendor" / "inner"
    inner.mkdir(parents=True)
    git(inner, "init", "-q")
    git(outer, "worktree", "add", "-q", str(tmp_path / "tree"))
    (outer / "stray" / ".git").mkdir(parents=True)
    (outer / "head-only" / ".git").mkdir(parents=True)
    (outer / "head-only" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (outer / "dangling").mkdir()
    (outer / "dangling" / ".git").write_text(f"gitdir: {tmp_path / 'nowhere'}\n")
    (outer / "not-a-link").mkdir()
    (outer / "not-a-link" / ".git").write_text("hello\n")
    (tmp_path / "plain" / "sub").mkdir(parents=True)
    return tmp_path


PLACES = [
    "outer",
    "outer/src",
    "outer/src/deep",
    "outer/src/file.py",
    "outer/src/missing/file.py",
    "outer/vendor",
    "outer/vendor/inner",
    "outer/stray",
    "outer/head-only",
    "outer/not-a-link",
    "tree",
    "tree/src",
    "tree/src/file.py",
    "plain/sub",
]


@pytest.mark.parametrize("place", PLACES)
def test_the_checkout_found_is_the_one_git_names(repos: Path, place: str) -> None:
    path = repos / place
    assert checkout_top(path) == gits_answer(path)


def test_with_gits_discovery_variables_set_git_itself_is_asked(
    repos: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repos / "outer"))
    path = repos / "outer" / "src"
    assert checkout_top(path) == gits_answer(path) is None


def test_a_link_to_a_missing_repository_is_no_checkout(repos: Path) -> None:
    path = repos / "outer" / "dangling"
    assert gits_answer(path) is None  # git refuses it, rather than looking further up
    assert checkout_top(path) is None
