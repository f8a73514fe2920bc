"""Which tasks claim which project files: what a changed-only run may narrow its selection by.

A task *claims* a path when something shows the task reads it: its snapshots' `[inputs]` (in
the working copy and at the revision compared with), what its module imports and reads now
(observed while the registry imported it), what its source says it depends on (its data, its
config files), and its own snapshot files. A claimed folder (a listed one, a data folder)
claims everything below it.

Claims only ever narrow: a changed path nobody claims is not shown to be irrelevant, so it
selects every task (`plugin.changes`). A task whose reads cannot all be seen (its code started
another process) claims everything, and so does a task with no readable record.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Claim:
    """One task's claim on a path: the task, and what the path is to it."""

    task: str
    what: str = ""
    """Said after the path in the selection's reasons: `""`, ` (its data)`, ..."""


@dataclass
class Claims:
    """Paths (absolute, as recorded and with their links resolved) and the tasks that claim
    them; folders claim everything below them."""

    files: dict[str, set[Claim]] = field(default_factory=dict)
    folders: dict[str, set[Claim]] = field(default_factory=dict)
    everything: dict[str, str] = field(default_factory=dict)
    """Tasks that claim every path (their reads cannot all be seen), with why."""
    _resolved: dict[str, str] = field(default_factory=dict, repr=False)
    """Folders with their links resolved: claims share a few folders, so each is resolved
    once (a path's own resolution then costs one check, whether it is a link)."""

    def add(self, path: str, claim: Claim, folder: bool = False) -> None:
        """`claim` on `path` (absolute), a folder when `folder` (or when it ends with a
        separator), under its name and its resolved name both."""
        folder = folder or path.endswith(os.sep)
        table = self.folders if folder else self.files
        normal = os.path.normpath(path)
        for form in {normal, self._real(normal)}:
            table.setdefault(form, set()).add(claim)

    def add_everything(self, task: str, why: str) -> None:
        """`task` claims every path: why is said when it is selected."""
        self.everything.setdefault(task, why)

    def of(self, path: str, is_folder: bool = False) -> dict[Claim, str]:
        """The claims a changed `path` (absolute) meets, each with the claimed path (a file:
        itself; a folder holding it; for a changed folder, such as a submodule, anything
        claimed below it)."""
        found: dict[Claim, str] = {}
        for form in _forms(path):
            for claim in self.files.get(form, ()):
                found.setdefault(claim, form)
            for folder in _parents(form, inclusive=True):
                for claim in self.folders.get(folder, ()):
                    found.setdefault(claim, folder + os.sep)
            if is_folder:
                inside = form + os.sep
                for table in (self.files, self.folders):
                    for claimed, claims in table.items():
                        if claimed.startswith(inside):
                            for claim in claims:
                                found.setdefault(claim, claimed)
        return found

    def claimed(self, path: str, is_folder: bool = False) -> bool:
        """Whether any task claims `path`."""
        return bool(self.of(path, is_folder))

    def _real(self, path: str) -> str:
        """`os.path.realpath(path)`, its folder resolved once for all the paths in it."""
        folder, name = os.path.split(path)
        real = self._resolved.get(folder)
        if real is None:
            real = self._resolved[folder] = os.path.realpath(folder)
        return os.path.realpath(path) if os.path.islink(path) else os.path.join(real, name)


def _forms(path: str) -> set[str]:
    """A path as given (normalised) and with its links resolved."""
    normal = os.path.normpath(path)
    return {normal, os.path.realpath(normal)}


def _parents(path: str, inclusive: bool) -> Iterator[str]:
    """`path`'s folders up to the file system's root (and `path` itself when `inclusive`)."""
    current = path if inclusive else os.path.dirname(path)
    while True:
        yield current
        parent = os.path.dirname(current)
        if parent == current:
            return
        current = parent


def claim_all(claims: Claims, task: str, paths: Iterable[str], what: str = "") -> None:
    """`task` claims each of `paths` (absolute; a listed folder ends with a separator)."""
    for path in paths:
        claims.add(path, Claim(task, what))
