"""The run's own temporary folder: every temporary folder this package keeps for a run (the
builds' private caches, inspect_evals' downloads, another machine's home) lies in it, and it is
removed when the run ends.

A process removes only the folder it made, at its exit. The processes a run starts (a fresh
build's, an xdist worker's) make theirs inside the run's (`VARIABLE` names it to them): one they
could not remove themselves, because they were ended, goes with the run's. A fork (the look-ahead
process) shares its parent's and never removes it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

VARIABLE = "EVALTASKS_RUN_FOLDER"
"""The environment variable that names the folder of the run a process belongs to."""

_folder: str | None = None


def run_folder() -> Path:
    """This process's temporary folder (made on first use, inside the run's when this process
    was started by one, removed as this process exits)."""
    global _folder
    if _folder is None:
        parent = os.environ.get(VARIABLE)
        within = parent if parent and os.path.isdir(parent) else None
        _folder = tempfile.mkdtemp(prefix="evaltasks-run-", dir=within)
        os.environ[VARIABLE] = _folder
        atexit.register(_remove, _folder, os.getpid())
    return Path(_folder)


def _remove(folder: str, owner: int) -> None:
    """Remove `folder`, in the process that made it only (not in a fork of it)."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)
