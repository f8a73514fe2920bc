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
import unicodedata

HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"})
"""Unicode categories whose characters show as nothing or as a blank: controls, format
characters (zero-width space, joiners, direction marks, the byte-order mark), private use,
unassigned, surrogates, and every separator (a plain space is the one exception)."""

OPEN, CLOSE = "\u27e8", "\u27e9"
"""The brackets around a code point written out: `⟨U+200B⟩`."""


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


def guide(old: str, new: str) -> tuple[str, str] | None:
    """Guide lines for a line `old` replaced by `new` (both already visible): `^` under each
    character that differs on each side, blanks elsewhere; None when the lines share too little
    for a guide to help (less than half their characters)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    if matcher.ratio() < 0.5:
        return None
    old_marks = [" "] * len(old)
    new_marks = [" "] * len(new)
    for tag, old_start, old_end, new_start, new_end in matcher.get_opcodes():
        if tag == "equal":
            continue
        old_marks[old_start:old_end] = "^" * (old_end - old_start)
        new_marks[new_start:new_end] = "^" * (new_end - new_start)
    return "".join(old_marks).rstrip(), "".join(new_marks).rstrip()


def marked_diff(lines: list[str]) -> list[str]:
    """Unified diff lines (`-`, `+`, context, `@@`) made visible, with `?` guide lines under
    each removed line paired with an added one, and under that added line. A run of removals
    is paired, line by line, with the run of additions that follows it."""
    out: list[str] = []
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        for position, line in enumerate(removed):
            out.append(line)
            if position < len(added):
                marks = guide(line[1:], added[position][1:])
                if marks is not None and marks[0]:
                    out.append("?" + marks[0])
        for position, line in enumerate(added):
            out.append(line)
            if position < len(removed):
                marks = guide(removed[position][1:], line[1:])
                if marks is not None and marks[1]:
                    out.append("?" + marks[1])
        removed.clear()
        added.clear()

    for line in lines:
        line = visible(line)
        if line.startswith("-") and not line.startswith("---"):
            if added:
                flush()
            removed.append(line)
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return out
