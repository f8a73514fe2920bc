"""Read a snapshot file back into its facts: one parser, strict about content, tolerant of
what checkouts and editors do to text.

Tolerated: CRLF, trailing whitespace, a missing final newline (the writer escapes every
character these could touch). Refused, each with a `SnapshotFileError` whose `kind` says what
to do: git conflict markers, a file that is not a snapshot, a format this version cannot read,
and a file whose sections, counts or fingerprint do not agree with its doc hashes (edited by
hand). A refused file is never overwritten by an update: that would bypass the gate.
"""

from __future__ import annotations

import itertools
import operator
import re
from dataclasses import dataclass
from enum import StrEnum

from .facts import FORMAT_VERSION, OUTLINES_SINCE, READABLE_FORMATS, SnapshotFacts, label_key
from .layout import FIRST_LINE

SECTIONS = ("task", "settings", "layout", "inputs", "identities", "fingerprint")
"""The sections before the doc hashes, in the order the writer lays them out; all hold
`key: value` lines but `[inputs]`, which holds one path per line (format 3 on), and
`[identities]`, the outlines of the values `[task]` records by digest (format 5 on, written
only when there is one)."""

LISTS = frozenset({"inputs", "identities"})

_CONFLICT = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
_HASHES_HEADER = re.compile(r"\[doc hashes\] (\d+) docs, by id")
_DIGEST = re.compile(r"[0-9a-f]{16}")
_FINGERPRINT = re.compile(r"sha256:([0-9a-f]{64})")


class FileProblem(StrEnum):
    """Why a file cannot be read back."""

    CONFLICT = "conflict"
    NOT_A_SNAPSHOT = "not a snapshot"
    NEWER_FORMAT = "newer format"
    UNVERIFIABLE_FORMAT = "unverifiable format"
    EDITED = "edited by hand"
    UNREADABLE = "unreadable"


class SnapshotFileError(ValueError):
    """A snapshot file that cannot be read back: corrupted, truncated, mid-merge or edited."""

    def __init__(self, message: str, kind: FileProblem = FileProblem.UNREADABLE) -> None:
        super().__init__(message)
        self.kind = kind


RESTORE = (
    "restore it from version control (git checkout -- FILE), or in a merge take either side; "
    "then let the gate say what to bump"
)


@dataclass(frozen=True)
class Head:
    """A file's format and `key: value` sections, read from its start."""

    format_version: int
    sections: dict[str, dict[str, str]]
    hashes_at: int
    lists: dict[str, list[str]]
    """The sections that hold one item per line (`[inputs]`)."""
    """Offset of the `[doc hashes]` line, or -1 when the text ends before it."""


_SPACE_AT_LINE_END = re.compile(r"\n(?<=[^\S\n]\n)")
"""A newline after whitespace: what `normalise` strips, in a text that ends with a newline.
(Matching the newline first lets the engine jump from newline to newline, where a pattern
that opens with the whitespace class tries every character: 17x faster on a snapshot.)"""


def normalise(text: str) -> str:
    """The text as compared: LF line endings, no trailing whitespace, one final newline.

    A text that is already so (every file the writer wrote, unless a checkout or an editor
    touched it) is returned as it is, without a copy of each line."""
    if (
        text.endswith("\n")
        and not text.endswith("\n\n")
        and "\r" not in text
        and not _SPACE_AT_LINE_END.search(text)
    ):
        return text
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


def _conflict(text: str) -> re.Match[str] | None:
    """The first git conflict marker line; the markers' own text is looked for first, which
    is cheaper than trying the line-start pattern at every line."""
    if "<<<<<<< " not in text and "=======" not in text and ">>>>>>> " not in text:
        return None
    return _CONFLICT.search(text)


def parse_head(text: str, complete: bool = True) -> Head:
    """The format and sections of a normalised text; `complete=False` for the first bytes of a
    file (only what is there is read, the rest is not checked)."""
    conflict = _conflict(text)
    if conflict is not None:
        number = text.count("\n", 0, conflict.start()) + 1
        raise SnapshotFileError(
            f"has unresolved git conflict markers (line {number}): take either side of the "
            f"conflict (git checkout --ours FILE, or --theirs), then let the gate say what to "
            f"bump",
            FileProblem.CONFLICT,
        )
    match = re.match(re.escape(FIRST_LINE) + r" (\S+)\n", text)
    if match is None:
        raise SnapshotFileError(
            "is not a pytest-evaltasks snapshot (its first line is missing)",
            FileProblem.NOT_A_SNAPSHOT,
        )
    version = _format_version(match.group(1))
    hashes_at = text.find("\n[doc hashes]")
    head = text if hashes_at == -1 else text[: hashes_at + 1]
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    listed: list[str] | None = None
    lists: dict[str, list[str]] = {}
    for number, line in enumerate(head.split("\n")[1:], start=2):
        if not line or (line.startswith("#") and current is None):
            continue
        if line.startswith("["):
            name = line[1:-1] if line.endswith("]") else ""
            if name not in SECTIONS:
                raise _edited(f"line {number} opens an unknown section {line!r}")
            if name in sections:
                raise _edited(f"the [{name}] section appears twice (line {number})")
            current = sections[name] = {}
            listed = None
            if name in LISTS:
                listed = lists[name] = []
            continue
        if current is None:
            raise _edited(f"line {number} is outside any section")
        if listed is not None:
            listed.append(line)
            continue
        key, sep, value = line.partition(": ")
        if not sep:
            if not line.endswith(":"):
                raise _edited(f"line {number} is not a `key: value` line")
            key, value = line[:-1], ""
        if key in current:
            raise _edited(f"the key {key!r} appears twice (line {number})")
        current[key] = value
    if complete:
        expected = [name for name in SECTIONS if _expected(name, version)]
        if "identities" in sections and version >= OUTLINES_SINCE:
            expected.insert(expected.index("fingerprint"), "identities")
        order = [name for name in expected if name in sections]
        if order != list(sections) or len(order) != len(expected) or hashes_at == -1:
            missing = [f"[{name}]" for name in expected if name not in sections]
            if hashes_at == -1:
                missing.append("[doc hashes]")
            raise _edited(
                f"its sections are missing or out of order ({', '.join(missing) or 'order'}): "
                f"it is truncated or edited"
            )
    return Head(version, sections, hashes_at, lists)


def _expected(section: str, version: int) -> bool:
    """Whether a file of this format must hold the section (`[identities]` is optional)."""
    if section == "identities":
        return False
    return version >= 3 or section not in LISTS


def _format_version(text: str) -> int:
    """The format number; one this version cannot read is refused, never migrated."""
    if not text.isdigit():
        raise SnapshotFileError(
            f"declares format {text!r}, which no pytest-evaltasks writes; {RESTORE}",
            FileProblem.EDITED,
        )
    version = int(text)
    if version > FORMAT_VERSION:
        raise SnapshotFileError(
            f"was written by a newer pytest-evaltasks (format {version}; this one reads "
            f"formats {READABLE_FORMATS[0]}-{FORMAT_VERSION}): upgrade pytest-evaltasks to "
            f"check or update it",
            FileProblem.NEWER_FORMAT,
        )
    if version not in READABLE_FORMATS:
        raise SnapshotFileError(
            f"was written in format {version}, whose content this version cannot verify: bump "
            f"the task's `version` and record it again with --snapshot-update",
            FileProblem.UNVERIFIABLE_FORMAT,
        )
    return version


def parse_snapshot(text: str) -> SnapshotFacts:
    """The facts a file records, after checking that its counts and fingerprint agree."""
    text = normalise(text)
    head = parse_head(text)
    start = text.find("\n", head.hashes_at + 1) + 1
    header = text[head.hashes_at + 1 : start - 1]
    declared = _HASHES_HEADER.fullmatch(header)
    if declared is None:
        raise _edited(f"its doc hashes header {header!r} is not `[doc hashes] N docs, by id`")
    end = text.find("\n\n", start - 1)
    hash_text = text[start : end + 1] if end != -1 else text[start:]
    facts = SnapshotFacts(
        format_version=head.format_version,
        task=head.sections["task"],
        settings=head.sections["settings"],
        layout=head.sections["layout"],
        hashes=hash_text,
        inputs=tuple(head.lists.get("inputs", ())),
        identities=tuple(head.lists.get("identities", ())),
    )
    _check_agreement(facts, int(declared.group(1)), head.sections["fingerprint"])
    return facts


def _check_agreement(facts: SnapshotFacts, declared: int, fingerprint: dict[str, str]) -> None:
    """The counts, the hash lines and the fingerprint must agree with each other."""
    if "name" not in facts.task or "version" not in facts.task:
        raise _edited("its [task] section has no name or version")
    text = facts.hash_text
    listed = text.count("\n")
    if listed != declared:
        raise _edited(f"its [doc hashes] header says {declared} docs, but it lists {listed}")
    if not _in_row_number_order(text):
        _check_hash_lines(text.split("\n")[:-1])
    if list(facts.inputs) != sorted(set(facts.inputs)):
        raise _edited("its [inputs] are not sorted, or list a file twice")
    total = facts.total_docs
    if facts.format_version >= 3 and total != declared:
        raise _edited(f"its [task] says docs: {facts.task.get('docs')}, but it hashes {declared}")
    if facts.format_version < 3 and (total is None or total < declared):
        raise _edited(f"its [task] says docs: {facts.task.get('docs')}, but it hashes {declared}")
    found = _FINGERPRINT.fullmatch(fingerprint.get("content", ""))
    if found is None or found.group(1) != facts.fingerprint():
        raise _edited("its [fingerprint] does not match its content")


_ROW_NUMBER_LINES = re.compile(r"(?:(?:0|[1-9][0-9]*) [0-9a-f]{16}\n)*")
_ROW_NUMBER = re.compile(r"^([0-9]+) ", re.MULTILINE)


def _in_row_number_order(text: str) -> bool:
    """Whether every hash line is `ROW DIGEST` with row numbers strictly increasing: the
    usual file, whose lines are then all well-formed, distinct and in label order. Checked
    without a string per line; any other text is checked line by line."""
    if _ROW_NUMBER_LINES.fullmatch(text) is None:
        return False
    numbers = list(map(int, _ROW_NUMBER.findall(text)))  # C-level loops: a line costs little
    return all(map(operator.lt, numbers, itertools.islice(numbers, 1, None)))


def _check_hash_lines(lines: list[str]) -> None:
    """Every hash line `LABEL DIGEST`, each label once, in label order."""
    labels: list[str] = []
    for line in lines:
        label, _, digest = line.rpartition(" ")
        if not label or not _DIGEST.fullmatch(digest):
            raise _edited(f"the doc hash line {line!r} is not `LABEL DIGEST`")
        labels.append(label)
    if len(set(labels)) != len(labels):
        raise _edited("a doc label appears twice in [doc hashes]")
    if labels != sorted(labels, key=label_key):
        raise _edited("its [doc hashes] are not in label order")


def _edited(what: str) -> SnapshotFileError:
    return SnapshotFileError(f"was edited by hand: {what}; {RESTORE}", FileProblem.EDITED)


def recorded_label(head_text: str) -> str | None:
    """The task label the start of a file records (its `name:`), through the same parser; None
    when it is not a readable snapshot."""
    cut = head_text.rfind("\n")  # the bytes read may end inside a line
    text = head_text[: cut + 1] if cut != -1 else head_text
    task = text.find("\n[task]\n")
    end = text.find("\n[", task + 1) if task != -1 else -1
    if end != -1:
        text = text[: end + 1]  # the name is in [task]: what follows is read when checked
    text = normalise(text)
    try:
        head = parse_head(text, complete=False)
    except SnapshotFileError:
        return None
    return head.sections.get("task", {}).get("name")


def recorded_shown_text(text: str) -> str:
    """The docs shown in full in a recorded file, normalised: what `shown_text` lays out.

    With the facts equal (the gate compared them), this is all that is left to compare: a
    cheaper check than laying out and comparing the whole file.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    start = text.find("\n[doc 1 of ")
    if start == -1:
        return ""
    return "".join(f"{line.rstrip()}\n" for line in text[start:].rstrip("\n").split("\n"))


def shown_blocks(text: str) -> dict[str, list[str]]:
    """The docs shown in full in a snapshot text, by label, as lines."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in normalise(text).split("\n"):
        if line.startswith("[doc ") and "] id=" in line:
            current = blocks.setdefault(line.partition("] id=")[2], [])
        if current is not None:
            current.append(line)
            if line == "--- end ---":
                current = None
    return blocks
