"""`evaltasks_changed_ignore`: the files a project declares irrelevant to every task.

A changed-only run selects every task when a file that no task claims changes; a file the
project knows cannot affect any prompt (its README, its docs site) is declared here so that
editing it checks nothing. Patterns are relative to the root directory, one per line, in the
manner of `.gitignore`:

- `README.md`, `*.md`: no `/` but a trailing one: a file or folder of that name at any depth;
- `docs/`: a trailing `/`: that folder, anywhere, and everything below it;
- `site/index.html`, `/CHANGELOG.md`, `docs/**/*.png`, `../web/`: a `/` inside (or a leading
  one): a path relative to the root directory (`../` reaches beside it, `**` any folders);
- `#` starts a comment line.

Nothing is ignored by default. A declared file that a task claims (its record lists it) is
still checked for that task: the list only ever hides files no task was seen to read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INI_KEY = "evaltasks_changed_ignore"


@dataclass(frozen=True)
class IgnoreList:
    """Declared patterns, compiled; `matches` takes a path relative to the root (POSIX)."""

    patterns: tuple[str, ...]
    _compiled: tuple[re.Pattern[str], ...]

    @classmethod
    def parse(cls, lines: list[str]) -> IgnoreList:
        """The ini lines as patterns; a pattern that cannot be one raises `ValueError` naming
        it and saying how to write it."""
        patterns = [line.strip() for line in lines]
        patterns = [p for p in patterns if p and not p.startswith("#")]
        for pattern in patterns:
            if pattern.startswith("!"):
                raise ValueError(
                    f"{INI_KEY} (ini): {pattern!r}: negated patterns are not supported; list "
                    f"only the files to ignore"
                )
            if pattern.startswith("//") or (len(pattern) > 1 and pattern[1] == ":"):
                raise ValueError(
                    f"{INI_KEY} (ini): {pattern!r} is an absolute path; write it relative to "
                    f"the root directory (e.g. docs/ or *.md)"
                )
        return cls(tuple(patterns), tuple(_compile(p) for p in patterns))

    def matches(self, relative: str) -> str | None:
        """The first pattern matching `relative` (a path relative to the root, `/`-separated,
        possibly starting with `../`), or None."""
        for pattern, compiled in zip(self.patterns, self._compiled, strict=True):
            if compiled.fullmatch(relative):
                return pattern
        return None


NOTHING = IgnoreList((), ())
"""The default: no file is declared irrelevant."""


def _compile(pattern: str) -> re.Pattern[str]:
    """A pattern as a regular expression over a whole relative path."""
    folder = pattern.endswith("/")
    body = pattern.strip("/") if pattern.startswith("/") else pattern.rstrip("/")
    anchored = pattern.startswith("/") or "/" in body
    text = _glob(body)
    head = "" if anchored else "(?:.*/)?"
    tail = "/.+" if folder else "(?:/.+)?"
    return re.compile(head + text + tail)


def _glob(pattern: str) -> str:
    """A glob as a regular expression: `**` across folders, `*` and `?` within one name,
    `[...]` a set of characters; everything else literal."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[" and (end := pattern.find("]", index + 2)) != -1:
            inner = pattern[index + 1 : end]
            negate = inner.startswith("!")
            inner = re.escape(inner[1:] if negate else inner).replace(r"\-", "-")
            out.append(f"[{'^' if negate else ''}{inner}]")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)
