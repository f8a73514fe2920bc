"""The git checkout a project lives in, found as git finds it, without starting git.

A project's own files are those of its checkout: a monorepo's helpers and scoring code beside
the root directory are the project's as much as the task modules are. Reading `.git` entries
directly costs a few file checks, where starting git would cost every run a process.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_DISCOVERY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)
"""Environment variables that change where git finds a checkout: with any of them set, git
itself is asked."""


def checkout_top(path: Path) -> Path | None:
    """The top folder of the git checkout holding `path`; None outside a checkout.

    The nearest folder upward with a `.git` that is a repository or a link to one (a
    `gitdir:` file: a worktree or a submodule), on the same file system as `path`, as git
    searches by default; a `.git` file that links nowhere ends the search, as in git. What it
    reads is never a task's input (`inputs.unrecorded`).
    """
    from .inputs import unrecorded

    with unrecorded():
        return _checkout_top(path)


def _checkout_top(path: Path) -> Path | None:
    """`checkout_top`, observed or not."""
    if any(name in os.environ for name in GIT_DISCOVERY_VARIABLES):
        return _asked_git(path)
    folder = existing_folder(path).resolve()
    device = folder.stat().st_dev
    while True:
        found = _git_entry(folder / ".git")
        if found is not None:
            return folder if found else None
        parent = folder.parent
        if parent == folder or parent.stat().st_dev != device:
            return None
        folder = parent


def project_folder(root: Path) -> Path:
    """Where the project's files live: the git checkout holding the root (a monorepo's helpers
    may sit beside it), else the root itself."""
    return checkout_top(root) or root


def existing_folder(path: Path) -> Path:
    """`path` if it is a folder, else the nearest existing folder above it."""
    start = path if path.is_dir() else path.parent
    while not start.exists() and start != start.parent:
        start = start.parent
    return start


def _asked_git(path: Path) -> Path | None:
    """git's own answer, where the environment changes how it searches."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=existing_folder(path),
            capture_output=True,
            check=False,
            timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(done.stdout.decode().strip()) if done.returncode == 0 else None


def _git_entry(entry: Path) -> bool | None:
    """What git makes of a `.git`: True for a repository folder (`HEAD` and `objects`) or a
    `gitdir:` file naming a folder with a `HEAD` (a worktree's or a submodule's); False for
    any other file, which git refuses rather than looking further up; None for no entry, or
    a folder that is no repository, which git passes over."""
    try:
        if entry.is_dir():
            return True if (entry / "HEAD").is_file() and (entry / "objects").is_dir() else None
        with entry.open("rb") as file:
            text = file.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return False
    target = entry.parent / text[len("gitdir: ") :].strip()  # an absolute path stays as it is
    return (target / "HEAD").is_file()
