"""The index of lm-eval's YAML task files: which names each file defines, read lazily.

**Why lazy.** lm-eval's `TaskIndex` parses every YAML file under its folders (14,683 names in
0.4.13) before it loads one task. `YamlIndex` instead indexes only the files that can define
the names a run asks for, verified against the files' bytes. Each file's index record (what
lm-eval's loader makes of it: its name, kind, tags, group members, version, shots, and the files
it includes) is kept in pytest's cache, keyed by a digest of the file's bytes and of every file
it includes, and the installed lm-eval's version: every file is read and hashed on each run
(a fraction of a second for lm-eval's whole folder) and a record whose digests differ is
parsed again. A file without a record is parsed only when it can define a name the run needs:
its bytes, or those of a file it includes, hold the name (a task name, group or tag is written
in the YAML that defines it). Each name found pulls in its group's members and its tag's tasks,
and every file that holds a name needed is parsed, so the index of those names is exactly
lm-eval's (its first definition in a folder wins, a later folder overrides). A name found
nowhere, or any doubt, means parsing everything.

`sources/lm_eval/source.LmEvalYaml`, the task source, holds one `YamlIndex` and asks it only through
its public methods and attributes; this module never imports the source, and lm-eval's code
(`sources/lm_eval/adapter`) only inside the functions that need it.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CACHE_KEY = "evaltasks/lm-eval-index"
RECORDS_VERSION = 1


@dataclass
class FileRecord:
    """One YAML file as lm-eval's index reads it, with the digests it is valid for."""

    digest: str
    includes: dict[str, str]
    config: dict[str, Any] | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "includes": self.includes,
            "config": self.config,
            "error": self.error,
        }


_INDEX_KEYS = ("task", "group", "tag", "class", "num_fewshot")


def _index_part(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a merged config the index and the registry use."""
    part = {key: config[key] for key in _INDEX_KEYS if key in config}
    metadata = config.get("metadata")
    if isinstance(metadata, dict) and "version" in metadata:
        part["__version__"] = [metadata["version"]]
    return part


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def environment_key() -> str:
    """What every record also depends on: lm-eval's loader (its version) and this format."""
    import sys

    from .adapter import lm_eval_version

    return f"records {RECORDS_VERSION}; lm-eval {lm_eval_version()}; python {sys.version_info[:2]}"


class YamlIndex:
    """lm-eval's index over the YAML files of some folders, made of only the files the names
    asked for need (see the module docstring)."""

    def __init__(self, roots: list[Path], cache: Any) -> None:
        self.roots = roots
        """The folders, in lm-eval's order (its installed one first, then `--include_path`'s)."""
        self.cache = cache
        """pytest's cache (`get`/`set`) the records are kept in; None without one."""
        self.index: dict[str, Any] = {}
        """lm-eval's index entries of the names indexed so far (name -> entry)."""
        self.overrides: list[str] = []
        """lm-eval's warnings of the names a later folder overrides."""
        self.partial = False
        """Only some files were parsed: a name not indexed may be in another."""
        self._files: dict[Path, list[Path]] = {}
        self._bytes: dict[str, bytes | None] = {}
        self._records: dict[str, FileRecord] = {}
        self._cached: dict[str, FileRecord] = {}
        self._parsed_new = False
        self._complete = False
        self._trusted: set[str] = set()
        self._include_cache: dict[str, list[str] | None] = {}
        self._replayed: tuple[tuple[int, int], dict[str, Any]] | None = None

    # what the source asks -------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        """Every file of every folder was indexed: `index` is lm-eval's whole index."""
        return self._complete

    @property
    def trusted(self) -> AbstractSet[str]:
        """The names whose entry in `index` is lm-eval's own (every file that can define them
        was parsed): the only ones a source may register."""
        return self._trusted

    @property
    def files_indexed(self) -> int:
        """How many files have a record this run (parsed, or cached and verified)."""
        return len(self._records)

    @property
    def files_found(self) -> int:
        """How many YAML files the folders listed so far hold."""
        return sum(len(files) for files in self._files.values())

    def record_of(self, path: object) -> FileRecord | None:
        """A file's record this run (None: not indexed): its index part, its includes."""
        return self._records.get(str(path))

    def kind(self, name: str) -> str:
        """What lm-eval's index makes of an indexed name: TASK, PY_TASK, GROUP or TAG."""
        from .adapter import kind_of

        return kind_of(self.index[name])

    def root_of(self, path: Path) -> Path | None:
        """The folder (of `roots`, the innermost) a file is in: by its path as written, which
        for the index's files starts with their folder's."""
        text = os.path.abspath(path)
        for root in sorted(self.roots, key=lambda r: len(str(r)), reverse=True):
            base = str(root)
            if text == base or text.startswith(base + os.sep):
                return root
        resolved = Path(text).resolve()
        for root in self.roots:
            if root == resolved or root in resolved.parents:
                return root
        return None

    # indexing -------------------------------------------------------------------------------

    def index_names(self, wanted: set[str], exact: set[str], whole: Iterable[Path] = ()) -> None:
        """Index every file of the folders `whole` (and the names their groups and tags refer
        to) and every file that can define a name of `wanted`; a name of `exact` found nowhere
        means indexing everything. Nothing to look for: nothing is read."""
        folders = list(whole)
        for root in folders:
            self._parse_all(root)
        needed = set(wanted)
        if folders:
            needed |= self._group_members(self._replay(), set(self._names_in(folders)))
        if needed or folders:
            self._index_names(needed, exact)

    def index_all(self) -> None:
        """Parse every file of every folder: `index` becomes lm-eval's whole index."""
        for root in self.roots:
            self._yaml_files(root)
            self._parse_all(root)
        self.index = self._replay()
        self._complete = True

    def _names_in(self, roots: list[Path]) -> Iterable[str]:
        for name, entry in self._replay().items():
            if entry.yaml_path is not None and self.root_of(Path(entry.yaml_path)) in roots:
                yield name

    def _yaml_files(self, root: Path) -> list[Path]:
        if root not in self._files:
            from .adapter import yaml_files

            self._files[root] = yaml_files(root)
        return self._files[root]

    def _read(self, path: str) -> bytes | None:
        if path not in self._bytes:
            try:
                with open(path, "rb") as stream:
                    self._bytes[path] = stream.read()
            except OSError:
                self._bytes[path] = None
        return self._bytes[path]

    def _valid(self, path: Path) -> FileRecord | None:
        """The record of `path` when its digests still hold (parsed this run, or cached)."""
        key = str(path)
        known = self._records.get(key)
        if known is not None:
            return known
        cached = self._cached.get(key)
        data = self._read(key)
        if cached is None or data is None or cached.digest != _digest(data):
            return None
        for include, digest in cached.includes.items():
            included = self._read(include)
            if included is None or _digest(included) != digest:
                return None
        self._records[key] = cached
        return cached

    def _parse(self, path: Path) -> FileRecord:
        from .adapter import index_config

        key = str(path)
        known = self._valid(path)
        if known is not None:
            return known
        config, error, includes = index_config(path)
        data = self._read(key) or b""
        record = FileRecord(
            _digest(data),
            {include: _digest(self._read(include) or b"") for include in includes},
            _index_part(config) if config is not None else None,
            error,
        )
        self._records[key] = record
        self._parsed_new = True
        return record

    def _parse_all(self, root: Path) -> None:
        for path in self._yaml_files(root):
            self._parse(path)

    def _replay(self) -> dict[str, Any]:
        """lm-eval's index over the records known so far (replayed again only when records or
        folders were added since: a file's record is set once per run, never replaced, so the
        counts say whether anything changed)."""
        from .adapter import replay

        state = (len(self._records), len(self._files))
        if self._replayed is not None and self._replayed[0] == state:
            return self._replayed[1]
        roots = []
        for root in self.roots:
            files = []
            for path in self._yaml_files(root) if root in self._files else []:
                record = self._records.get(str(path))
                if record is not None and record.config is not None:
                    files.append((path, record.config))
            roots.append(files)
        index, self.overrides = replay(roots)
        self._replayed = (state, index)
        return index

    def _index_names(self, wanted: set[str], exact: set[str]) -> None:
        """Parse every file that can define a name of `wanted` (and what those names need),
        then keep the index of those names; a name of `exact` found nowhere parses
        everything (the index is then lm-eval's whole index)."""
        needed = set(wanted)
        index = self._replay()
        if needed:
            for root in self.roots:
                self._yaml_files(root)
            while True:
                for path in self._candidates(needed):
                    self._parse(path)
                index = self._replay()
                more = self._group_members(index, needed) - needed
                if not more:
                    break
                needed |= more
        missing = [name for name in exact if name not in index]
        if missing and not self._complete_now():
            for root in self.roots:
                self._parse_all(root)
            index = self._replay()
        self.index = index
        self._complete = self._complete_now()
        self.partial = not self._complete
        prefixes = tuple(exact)
        full = self._full_roots()
        self._trusted |= {
            name
            for name in index
            if self._complete
            or name in needed
            or (prefixes and name.startswith(prefixes))
            or self.root_of(Path(index[name].yaml_path or "/")) in full
        }

    def _complete_now(self) -> bool:
        """Every file of every folder has a record this run (the index is lm-eval's whole)."""
        return bool(self.roots) and not any(self._missing(root) for root in self.roots)

    def _missing(self, root: Path) -> bool:
        files = self._files.get(root)
        return files is None or any(str(path) not in self._records for path in files)

    def _full_roots(self) -> list[Path]:
        return [root for root in self.roots if not self._missing(root)]

    def _group_members(self, index: dict[str, Any], names: set[str]) -> set[str]:
        """Every name the groups and tags among `names` refer to."""
        from .adapter import kind_of

        found: set[str] = set()
        for name in names:
            entry = index.get(name)
            if entry is None:
                continue
            kind = kind_of(entry)
            if kind == "TAG":
                found |= set(entry.tags)
            elif kind == "GROUP":
                found |= _member_names((entry.cfg or {}).get("task"))
            found |= set(entry.tags) if kind == "GROUP" else set()
        return found

    # choosing the files to parse ------------------------------------------------------------

    def _candidates(self, names: set[str]) -> list[Path]:
        """Files without a valid record that can define one of `names`: their bytes hold one
        as a whole word (the value of `task:`, `group:` or `tag:`, or a list item, is never
        glued to another name character: `mmlu` is not in `cmmlu_anatomy`), or they include
        (at any depth) a file whose bytes do."""
        if not names:
            return []
        needles = [name.encode("utf-8") for name in names]
        unknown = [
            path for root in self.roots for path in self._files[root] if self._valid(path) is None
        ]
        if not unknown:
            return []
        holds: dict[str, bool] = {}
        words = _word_pattern(needles)

        def holding(path: str) -> bool:
            if path not in holds:
                data = self._read(path)
                holds[path] = (
                    data is not None
                    and any(needle in data for needle in needles)
                    and words.search(data) is not None
                )
            return holds[path]

        chosen: set[Path] = set()
        includes: dict[Path, list[str] | None] = {}
        for path in unknown:
            refs = self._refs(str(path))
            includes[path] = refs
            if holding(str(path)) or refs is None:
                chosen.add(path)
        changed = True
        while changed:
            changed = False
            chosen_names = {str(path) for path in chosen}
            for path in unknown:
                if path in chosen:
                    continue
                refs = includes[path] or []
                if any(ref in chosen_names or holding(ref) or self._includes_holding(ref, holding)
                       for ref in refs):  # fmt: skip
                    chosen.add(path)
                    changed = True
        return sorted(chosen, key=lambda path: path.as_posix())

    def _refs(self, path: str) -> list[str] | None:
        """The files a YAML includes, read without parsing it (kept per file)."""
        if path not in self._include_cache:
            self._include_cache[path] = _include_refs(self._read(path) or b"", Path(path))
        return self._include_cache[path]

    def _includes_holding(self, path: str, holding: Any, depth: int = 0) -> bool:
        """Whether a file a YAML includes itself includes one that holds a wanted name."""
        if depth > 8:
            return True
        refs = self._refs(path)
        if refs is None:
            return True
        return any(holding(ref) or self._includes_holding(ref, holding, depth + 1) for ref in refs)

    # pytest's cache -------------------------------------------------------------------------

    def load_cache(self) -> None:
        """The records pytest's cache kept for this lm-eval (each used only once its digests
        are verified against the files' bytes)."""
        if self.cache is None:
            return
        try:
            data = self.cache.get(CACHE_KEY, None)
        except Exception:
            data = None
        if not isinstance(data, dict) or data.get("environment") != environment_key():
            return
        for path, item in (data.get("files") or {}).items():
            if not isinstance(item, dict) or not isinstance(item.get("digest"), str):
                continue
            includes = item.get("includes") or {}
            config = item.get("config")
            if isinstance(includes, dict) and (config is None or isinstance(config, dict)):
                self._cached[path] = FileRecord(item["digest"], includes, config, item.get("error"))

    def save_cache(self) -> None:
        """Keep the records in pytest's cache, when a file was parsed since the last save."""
        if self.cache is None or not self._parsed_new or not hasattr(self.cache, "set"):
            return
        import json

        files = {**{k: v.to_json() for k, v in self._cached.items()}}
        for path, record in self._records.items():
            try:
                json.dumps(record.config)
            except (TypeError, ValueError):
                continue  # a value JSON cannot hold (a YAML date): parsed on every run
            files[path] = record.to_json()
        try:
            self.cache.set(CACHE_KEY, {"environment": environment_key(), "files": files})
        except Exception:
            return
        self._parsed_new = False


def _member_names(tasks: Any) -> set[str]:
    """The names a group's `task` list refers to (nested inline groups included)."""
    found: set[str] = set()
    for item in tasks if isinstance(tasks, list) else [tasks] if isinstance(tasks, str) else []:
        if isinstance(item, str):
            found.add(item)
        elif isinstance(item, dict):
            for key in ("task", "group"):
                value = item.get(key)
                if isinstance(value, str):
                    found.add(value)
            if isinstance(item.get("task"), list):
                found |= _member_names(item["task"])
    return found


_NAME_BYTES = rb"A-Za-z0-9_.\-"
"""Bytes that may continue a task name (lm-eval's names also hold `(`, `)`, which only makes
a match more likely): a name glued to one of these is part of another name."""


def _word_pattern(needles: list[bytes]) -> re.Pattern[bytes]:
    """Any of `needles` as a whole word (not preceded or followed by a name byte)."""
    ordered = sorted(set(needles), key=len, reverse=True)
    alternatives = b"|".join(re.escape(needle) for needle in ordered)
    edge = rb"[" + _NAME_BYTES + rb"]"
    return re.compile(rb"(?<!" + edge + rb")(?:" + alternatives + rb")(?!" + edge + rb")")


_INCLUDE = re.compile(rb"^include\s*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_ITEM = re.compile(rb"^[ \t]+-[ \t]*(.*?)[ \t]*$")


def _include_refs(data: bytes, path: Path) -> list[str] | None:
    """The files a YAML's top-level `include` names (absolute), read without parsing it; None
    when the form is not one this reader knows (then the file is parsed)."""
    match = _INCLUDE.search(data)
    if match is None:
        return []
    value = match.group(1).split(b" #")[0].strip()
    raw: list[bytes] = []
    if not value:
        for line in data[match.end() + 1 :].split(b"\n"):
            listed = _ITEM.match(line)
            if listed is None:
                if line.strip() and not line.lstrip().startswith(b"#"):
                    break
                continue
            raw.append(listed.group(1).split(b" #")[0].strip())
    elif value.startswith(b"["):
        if not value.endswith(b"]"):
            return None
        raw = [part.strip() for part in value[1:-1].split(b",") if part.strip()]
    else:
        raw = [value]
    refs: list[str] = []
    for item in raw:
        text = item.decode("utf-8", "replace").strip().strip("'\"")
        if not text or text[0] in "*&!{[|>":
            return None
        base = os.path.dirname(os.path.abspath(path))
        refs.append(os.path.normpath(text if os.path.isabs(text) else os.path.join(base, text)))
    return refs


__all__ = ["CACHE_KEY", "RECORDS_VERSION", "FileRecord", "YamlIndex", "environment_key"]
