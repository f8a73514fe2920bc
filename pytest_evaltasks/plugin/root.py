"""The project's root as its user meant it, when pytest took an option's value for a test path.

pytest fixes its rootdir (and looks for its ini file) from the command line before any plugin's
options are known, so `--evaltasks-data /data/mmlu` (the value after a space) reads to it as a
test path, and the rootdir becomes an ancestor of `/data/mmlu` instead of the project. The same
option written `--evaltasks-data=/data/mmlu` does not. A user's option must mean the same either
way, so when no ini file and no `--rootdir` fixed the root, and pytest's rootdir differs from
the one its own rule gives for the test paths actually named (pytest's arguments once the
plugin's options are known), the root is that one: the invocation folder, or what the named
test paths share. Pure functions over paths, checked against pytest's own choice in the tests.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

PATH_OPTIONS = (
    "--evaltasks",
    "--evaltasks-dir",
    "--evaltasks-custom",
    "--evaltasks-data",
    "--evaltasks-snapshot-dir",
    "--evaltasks-chat-template",
    "--evaltasks-report",
    "--evaltasks-results",
    "--evaltasks-export",
)
"""The options whose value may name an existing file or folder (a file of task strings, a
template), which pytest would take for a test path in the space form."""


CONFIG_FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
"""The files pytest may read its settings from, in its order, that a misread rootdir misses."""


def spaced_values(args: Sequence[str]) -> list[str]:
    """The values of `PATH_OPTIONS` given after a space (`--evaltasks-data DIR`), in order."""
    return [value for option, value in itertools.pairwise(args) if option in PATH_OPTIONS]


def rootdir_rule(paths: Sequence[str], invocation: Path) -> Path:
    """The rootdir pytest's rule gives for test `paths` when no ini file is found: the folder
    of a `setup.py` above what the paths share, else what they share with the invocation
    folder (what they share alone when that is the file system's root)."""
    dirs = [_folder_of(path, invocation) for path in paths]
    existing = [folder for folder in dirs if folder is not None]
    ancestor = _common(existing) if existing else invocation
    for folder in (ancestor, *ancestor.parents):
        if (folder / "setup.py").is_file():
            return folder
    shared = _common([invocation, ancestor])
    return ancestor if shared == Path(shared.anchor) else shared


def meant_root(config: pytest.Config) -> tuple[Path, str | None]:
    """The root relative paths and the default task folder resolve against, and, when it is
    not pytest's rootdir, why (for the run's header)."""
    root = config.rootpath
    if config.inipath is not None or getattr(config.option, "rootdir", None):
        return root, None
    invocation = config.invocation_params.dir
    values = [v for v in spaced_values(config.invocation_params.args) if _exists(v, invocation)]
    if not values:
        return root, None
    named = [str(arg) for arg in config.args] if _named(config) else []
    meant = rootdir_rule(named, invocation)
    if meant == root:
        return root, None
    missed = [name for name in CONFIG_FILES if (meant / name).is_file()]
    unread = f"; pytest read no ini file, so {missed[0]} was not read either" if missed else ""
    return meant, (
        f"root {meant} (pytest's rootdir {root} came from the value {values[0]!r} of an "
        f"evaltasks option written after a space; write the option as --option=VALUE to keep "
        f"pytest's rootdir and ini file{unread})"
    )


def _named(config: pytest.Config) -> bool:
    """The command line named test paths (not the ini's `testpaths`, not the folder alone)."""
    return config.args_source == pytest.Config.ArgsSource.ARGS


def _exists(value: str, invocation: Path) -> bool:
    try:
        return (invocation / value).exists()
    except (OSError, ValueError):
        return False


def _folder_of(path: str, invocation: Path) -> Path | None:
    """The folder of a test path (a node id's file part), when it exists."""
    candidate = Path(os.path.abspath(invocation / path.split("::")[0]))
    try:
        if candidate.is_dir():
            return candidate
        return candidate.parent if candidate.exists() else None
    except (OSError, ValueError):
        return None


def _common(paths: Sequence[Path]) -> Path:
    return Path(os.path.commonpath([str(path) for path in paths]))


def relative_name(path: Path, root: Path) -> str:
    """`path` relative to the root directory when inside it: an item's name, a result's file."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()
