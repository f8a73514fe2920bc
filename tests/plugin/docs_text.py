"""The repository's documentation as the tests read it: a section of a Markdown file (README.md,
docs/*.md), and the fenced code blocks of a text. Tests that check a command or an output the
documentation quotes read it from here, so they follow the text wherever it lives."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

HEADING = re.compile(r"^(#{1,6}) ")
FENCE = re.compile(r"^ *```")


def read(path: str) -> str:
    """The text of a file of the repository, `path` relative to its top folder."""
    return (REPO / path).read_text(encoding="utf-8")


def section(path: str, heading: str) -> str:
    """The text of `path` from the line `heading` (`## Options`, `### Many machines`) to the next
    heading of the same or a higher level, or to the end of the file. Lines inside fenced code
    blocks (a `# comment` in a shell block) are never headings."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = read(path).split("\n")
    start = lines.index(heading)
    end = len(lines)
    fenced = False
    for number in range(start + 1, len(lines)):
        line = lines[number]
        if FENCE.match(line):
            fenced = not fenced
            continue
        found = HEADING.match(line)
        if not fenced and found and len(found.group(1)) <= level:
            end = number
            break
    return "\n".join(lines[start:end])


def blocks(text: str, language: str = "") -> list[str]:
    """The fenced code blocks of `text` in a language (all when empty), dedented."""
    found = re.findall(r"^( *)```(\w*)\n(.*?)^\1```", text, re.MULTILINE | re.DOTALL)
    chosen = [(indent, body) for indent, lang, body in found if not language or lang == language]
    return ["\n".join(line[len(indent) :] for line in body.split("\n")) for indent, body in chosen]
