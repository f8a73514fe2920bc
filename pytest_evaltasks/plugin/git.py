"""git, as the plugin uses it: the repository's top, a revision's commit, files at a revision.

Paths are read with `-z` (never quoted, whatever their characters). A revision that is not in
the clone is an error that says how to fetch it: CI checkouts are shallow by default.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.checkout import existing_folder
from ..errors import EvalTaskError


class GitError(EvalTaskError):
    """git is missing, the folder is not a checkout, or the revision is unknown."""


def run_git(cwd: Path, *args: str, data: bytes | None = None) -> bytes:
    """Run git in `cwd`; its failure is a `GitError` with git's own message."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, input=data, capture_output=True, check=False, timeout=120
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} did not finish in 120 s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        if "not a git repository" in message:
            raise GitError(f"{cwd} is not inside a git repository")
        raise GitError(message or f"git {' '.join(args)} failed")
    return done.stdout


def toplevel(path: Path) -> Path:
    """The top folder of the git checkout holding `path`."""
    start = existing_folder(path)
    return Path(run_git(start, "rev-parse", "--show-toplevel").decode().strip())


def commit_of(top: Path, ref: str) -> str:
    """The commit `ref` names; an unknown one, or one a shallow clone lacks, says how to fetch."""
    try:
        found = run_git(top, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        return found.decode().strip()
    except GitError:
        pass
    shallow = run_git(top, "rev-parse", "--is-shallow-repository").decode().strip() == "true"
    why = "this clone is shallow, so it lacks that history" if shallow else "it is unknown here"
    raise GitError(
        f"{ref!r} is not a revision of the repository at {top} ({why}): fetch it, e.g. with "
        f"`fetch-depth: 0` in actions/checkout, or `git fetch origin <branch>`, then name a "
        f"branch, tag or commit (origin/main, HEAD~1)"
    )


@dataclass(frozen=True)
class FilesAt:
    """The snapshot files of one folder at one commit, and those of folders that held
    snapshots at that commit and no longer exist (the folder was moved or renamed since)."""

    ref: str
    commit: str
    folder: str
    """The folder relative to the repository's top, POSIX."""
    files: dict[str, bytes]
    """File name -> content."""
    moved: dict[str, str] = field(default_factory=dict)
    """File name -> the folder (POSIX, from the top) it was in at the commit, for the files
    found in a folder that no longer exists rather than in `folder`."""

    def where(self, name: str) -> str:
        """How a message names a file: `tasks/__snapshots__/x.txt at origin/main`."""
        folder = self.moved.get(name, self.folder)
        return f"{folder}/{name} at {self.ref}" if folder else f"{name} at {self.ref}"


SNAPSHOT_FILE = re.compile(r".+--[0-9a-f]{8}\.txt")
"""A snapshot file's name (`storage.snapshot_filename`)."""


def files_at(top: Path, ref: str, folder: Path) -> FilesAt:
    """Every file directly in `folder` at revision `ref`, read in one batch; and every
    snapshot file of a folder that held snapshots at `ref` but no longer exists, under a name
    `folder` did not hold at `ref` (the folder was moved, renamed, or reached through a new
    symlink since: the reviewed record is still the one judged against)."""
    commit = commit_of(top, ref)
    try:
        relative = folder.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise GitError(f"{folder} is not inside the git repository at {top}") from None
    prefix = "" if relative == "." else relative
    objects = _blobs_in(top, commit, prefix)
    moved: dict[str, str] = {}
    for gone, found in _gone_folders(top, commit, prefix, folder.resolve()):
        for name, oid in found:
            if name not in objects:
                objects[name] = oid
                moved[name] = gone
    contents = _read_blobs(top, list(objects.values()))
    return FilesAt(ref, commit, prefix, dict(zip(objects, contents, strict=True)), moved)


def _blobs_in(top: Path, commit: str, prefix: str) -> dict[str, str]:
    """The files directly in one folder at a commit (name -> object id); none when it did
    not exist then."""
    try:
        listing = run_git(top, "ls-tree", "-z", f"{commit}:{prefix}" if prefix else commit)
    except GitError:
        return {}  # the folder did not exist at that revision: no file is recorded there
    objects: dict[str, str] = {}
    for entry in listing.split(b"\0"):
        meta, _, name = entry.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            objects[name.decode("utf-8", "surrogateescape")] = parts[2].decode()
    return objects


def _gone_folders(
    top: Path, commit: str, prefix: str, current: Path
) -> list[tuple[str, list[tuple[str, str]]]]:
    """The folders (other than `prefix`) that held snapshot files at a commit and are not in
    the working tree now, or now lead to `current` (a symlink in their place), each with its
    snapshot files (name, object id), in path order. A folder that still exists elsewhere is
    another project's (or another setting's) and is left alone."""
    listing = run_git(top, "ls-tree", "-r", "-z", commit)
    folders: dict[str, list[tuple[str, str]]] = {}
    for entry in listing.split(b"\0"):
        meta, _, raw = entry.partition(b"\t")
        parts = meta.split()
        path = raw.decode("utf-8", "surrogateescape")
        parent, _, name = path.rpartition("/")
        if len(parts) != 3 or parts[1] != b"blob" or parent == prefix:
            continue
        if SNAPSHOT_FILE.fullmatch(name):
            folders.setdefault(parent, []).append((name, parts[2].decode()))
    return [
        (name, found)
        for name, found in sorted(folders.items())
        if not (top / name).is_dir() or (top / name).resolve() == current
    ]


def _read_blobs(top: Path, oids: list[str]) -> list[bytes]:
    """The contents of many blobs from one `git cat-file --batch`."""
    if not oids:
        return []
    out = run_git(top, "cat-file", "--batch", data="".join(f"{oid}\n" for oid in oids).encode())
    contents: list[bytes] = []
    at = 0
    for _ in oids:
        end = out.index(b"\n", at)
        size = int(out[at:end].split()[2])
        contents.append(out[end + 1 : end + 1 + size])
        at = end + 1 + size + 1
    return contents
