"""Prompt text made visible for a reviewer: nothing that changed may look unchanged.

A diff line `- | A: Madrid` above `+ | A: Madrid` tells a reviewer nothing when the second holds
a zero-width space, a no-break space or a doubled space. So every line a diff shows is passed
through `visible`, which writes each character a reader cannot see, or cannot tell from a plain
space, as `⟨U+XXXX⟩`; and each replaced line is followed by a guide line (`?`, as
`difflib.ndiff` writes them) with `^` under the characters that changed, which points at the
doubled space too. The snapshot file itself is untouched: this is display only.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Iterator

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"})
"""Unicode categories whose characters show as nothing or as a blank: controls, format
characters (zero-width space, joiners, direction marks, the byte-order mark), private use,
unassigned, surrogates, and every separator (a plain space is the one exception)."""

OPEN, CLOSE = "\u27e8", "\u27e9"
"""The brackets around a code point written out: `⟨U+200B⟩`."""

CODE_POINT = re.compile(re.escape(OPEN) + r"U\+[0-9A-F]{4,6}" + re.escape(CLOSE))
"""A code point as `visible` writes it."""


def hidden(char: str) -> bool:
    """Whether `char` cannot be seen, or told from a plain space, where it stands."""
    return char != " " and unicodedata.category(char) in HIDDEN_CATEGORIES


def code_point(char: str) -> str:
    """`⟨U+200B⟩`: the character as its code point, between brackets no prompt uses."""
    return f"{OPEN}U+{ord(char):04X}{CLOSE}"


def visible(text: str) -> str:
    """`text` with every hidden character written as its code point (a tab too)."""
    if text.isascii() and text.isprintable():
        return text  # the common case: nothing to mark, no per-character work
    return "".join(code_point(char) if hidden(char) else char for char in text)


MATCHED_CHARS = 400
"""Characters of a replaced line's changed middle matched character by character; a longer
middle (a prompt line of a whole document) is marked whole: matching is quadratic."""


Opcode = tuple[str, int, int, int, int]
"""`difflib.SequenceMatcher.get_opcodes()`'s shape: (tag, old start, old end, new start, new
end)."""


def common_ends(old: str, new: str) -> tuple[int, int, int]:
    """Where `old` and `new` stop agreeing from the start, and from the end: (start, old end,
    new end), so that `old[start:old_end]` was replaced by `new[start:new_end]`. Linear."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return start, len(old) - end, len(new) - end


def changes(old: str, new: str) -> list[Opcode]:
    """How `new` differs from `old`, character by character, as opcodes.

    The common start and end are taken off first (`common_ends`); only the middle between
    them is matched, and only when it is short: a longer middle is one replacement."""
    start, old_end, new_end = common_ends(old, new)
    codes: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    if (old_end - start) + (new_end - start) > 2 * MATCHED_CHARS:
        codes.append(("replace", start, old_end, start, new_end))
    elif old_end > start or new_end > start:
        matcher = difflib.SequenceMatcher(
            None, old[start:old_end], new[start:new_end], autojunk=False
        )
        codes += [
            (tag, start + i1, start + i2, start + j1, start + j2)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        ]
    if old_end < len(old):
        codes.append(("equal", old_end, len(old), new_end, len(new)))
    return codes


def guide(old: str, new: str) -> tuple[str, str] | None:
    """Guide lines for a line `old` replaced by `new` (both already visible): `^` under each
    character that differs on each side, blanks elsewhere; None when the lines share too little
    for a guide to help (less than half their characters)."""
    old_marks = [" "] * len(old)
    new_marks = [" "] * len(new)
    shared = 0
    for tag, old_start, old_end, new_start, new_end in changes(old, new):
        if tag == "equal":
            shared += old_end - old_start
            continue
        old_marks[old_start:old_end] = "^" * (old_end - old_start)
        new_marks[new_start:new_end] = "^" * (new_end - new_start)
    if 2 * shared < max(len(old), len(new)):
        return None
    return "".join(old_marks).rstrip(), "".join(new_marks).rstrip()


Run = tuple[list[str], list[str]]
"""A run of removed lines and the run of added lines after it, without their signs."""


def runs(lines: Iterable[str]) -> Iterator[Run | str]:
    """Unified diff lines as a reader pairs them: each run of removals with the run of
    additions that follows it, as a `Run`; any other line (context, `@@`, a heading) as
    itself. Every report of a diff pairs lines this one way."""
    removed: list[str] = []
    added: list[str] = []
    for line in lines:
        if line.startswith("-"):
            if added:
                yield removed, added
                removed, added = [], []
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
        else:
            if removed or added:
                yield removed, added
                removed, added = [], []
            yield line
    if removed or added:
        yield removed, added


def marked_diff(lines: list[str]) -> list[str]:
    """Unified diff lines (`-`, `+`, context, `@@`; no file headers) made visible, with `?`
    guide lines under each removed line paired with an added one, and under that added line
    (pairs as `runs` makes them)."""
    out: list[str] = []
    for run in runs(visible(line) for line in lines):
        if isinstance(run, str):
            out.append(run)
            continue
        removed, added = run
        marks = [guide(old, new) for old, new in zip(removed, added, strict=False)]
        for position, line in enumerate(removed):
            out.append("-" + line)
            mark = marks[position] if position < len(marks) else None
            if mark is not None and mark[0]:
                out.append("?" + mark[0])
        for position, line in enumerate(added):
            out.append("+" + line)
            mark = marks[position] if position < len(marks) else None
            if mark is not None and mark[1]:
                out.append("?" + mark[1])
    return out
