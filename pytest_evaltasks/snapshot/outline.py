"""An identity as readable lines, so that a changed object says what changed in it.

A `[task]` value that holds code or an object (an Inspect solver chain, a metric, a filter) is
recorded as `kind #digest`: the digest gates, but two digests tell a reviewer nothing. The file
therefore also keeps, in its `[identities]` section, each digest's outline: one line per step
and setting, made from the same canonical identity the digest is made from:

    #3f0c... inspect_ai.solver._chain:Chain
      _solvers[1]: inspect_ai.solver._prompt:prompt_template.<locals>.solve
      _solvers[1].prompt_template: "Q: {prompt}\\nA:"

When a value's digest changes, the gate lists the outline lines that differ
(`_solvers[1].prompt_template: "Q: ..." -> "Question: ..."`). The outline only explains: it is
derived from the identity, so it cannot change without the digest changing, and the digest
alone decides. A step's settings are read where its identity keeps them (an object's state, a
function's closure and defaults); machinery (`__dunder__` attributes, references back up the
walk) is left out, and so is anything past `OUTLINE_LINES` lines.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..engine.line_text import escape_line
from .identity_parts import _digest, _is_dunder

OUTLINE_LINES = 120
"""Lines kept of one identity's outline; the rest is named by a count."""

LEAF_CHARS = 1000
"""Characters of a value written in full; a longer one is written by its start, length and
digest."""

_KINDS = (
    "__function__",
    "__object__",
    "__type__",
    "__builtin__",
    "__method__",
    "__partial__",
    "__enum__",
    "__module__",
)
"""Tags whose text names what a node is (its location): a line of its own."""

_TRANSPARENT = frozenset({"state", "closure", "attrs", "kwdefaults", "items", "__dict__"})
"""Keys whose children are the node's own settings: `x.closure.template` reads `x.template`."""


def outline(described: Any, limit: int = OUTLINE_LINES) -> tuple[str, ...]:
    """The outline lines of an identity (`identity.identity`): `path: value`, the root's
    kind first (path empty), at most `limit` lines."""
    lines: list[str] = []
    _walk(described, "", lines)
    if len(lines) > limit:
        lines[limit:] = [f"... {len(lines) - limit} more lines"]
    return tuple(escape_line(line) for line in lines)


def _walk(node: Any, path: str, lines: list[str]) -> None:
    if isinstance(node, dict):
        if "__cycle__" in node:
            return
        kind = next((node[key] for key in _KINDS if isinstance(node.get(key), str)), None)
        if kind is not None:
            lines.append(_line(path, kind))
        children = [(key, value) for key, value in node.items() if key not in _KINDS]
        if kind is None and not children:
            lines.append(_line(path, "{}"))
        for key, value in children:
            if key in _TRANSPARENT and isinstance(value, dict):
                for name, inner in value.items():
                    if not _is_dunder(name):
                        _walk(inner, _join(path, name), lines)
            elif kind is None or not _is_dunder(key):
                _walk(value, _join(path, key), lines)
    elif isinstance(node, list):
        if not node:
            lines.append(_line(path, "[]"))
        for index, item in enumerate(node):
            _walk(item, f"{path}[{index}]", lines)
    else:
        lines.append(_line(path, _leaf(node)))


def _line(path: str, text: str) -> str:
    """`path: text`; the root's line is its text alone."""
    return f"{path}: {text}" if path else text


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _leaf(value: Any) -> str:
    """A scalar as JSON; a long string by its start, its length and a digest of it."""
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= LEAF_CHARS:
        return text
    start = json.dumps(str(value)[:60], ensure_ascii=False)
    return f'{start[:-1]}..." ({len(str(value))} chars, #{_digest(text)[:12]})'


def changes(old: Sequence[str], new: Sequence[str]) -> list[str]:
    """What differs between two outlines, a line each: `path: old -> new`, `path: added ...`,
    `path: removed ...`; a step added or removed is named once, not with each of its settings.
    A changed setting names the step it belongs to."""
    before, after = _by_path(old), _by_path(new)
    found: list[str] = []
    gone: list[str] = []
    for path in dict.fromkeys([*before, *after]):
        if any(path.startswith(parent) and path[len(parent)] in ".[" for parent in gone):
            continue
        was, now = before.get(path), after.get(path)
        if was == now:
            continue
        where = path or "itself"
        owner = _owner(path, after if now is not None else before)
        suffix = f" (in {owner})" if owner else ""
        if was is None:
            found.append(f"{where}: added {now}{suffix}")
            gone.append(path)
        elif now is None:
            found.append(f"{where}: removed {was}{suffix}")
            gone.append(path)
        else:
            found.append(f"{where}: {was} -> {now}{suffix}")
    return found


def _by_path(lines: Sequence[str]) -> dict[str, str]:
    """Outline lines by path (the root's kind line under the empty path)."""
    out: dict[str, str] = {}
    for index, line in enumerate(lines):
        if index == 0 and ": " not in line:
            out[""] = line
            continue
        path, _, value = line.partition(": ")
        out[path] = value
    return out


def _owner(path: str, lines: dict[str, str]) -> str | None:
    """The kind of the nearest step above `path` (a path whose line names a location), the
    root's at the top."""
    parent = path
    while parent:
        cut = max(parent.rfind("."), parent.rfind("["))
        parent = parent[:cut] if cut > 0 else ""
        value = lines.get(parent, "")
        if ":" in value and not value.startswith(('"', "[", "{")):
            return value
    return None


_COLLECTED: contextvars.ContextVar[dict[str, tuple[str, ...]] | None] = contextvars.ContextVar(
    "evaltasks_outlines", default=None
)


@contextlib.contextmanager
def collecting() -> Iterator[dict[str, tuple[str, ...]]]:
    """Collect, while a `[task]` header is made, the outline of every identity it records by
    digest (`note`): the header's values are written in many places, and each digest is
    made in one (`facts.value_summary`, `facts.metric_identity`)."""
    found: dict[str, tuple[str, ...]] = {}
    token = _COLLECTED.set(found)
    try:
        yield found
    finally:
        _COLLECTED.reset(token)


def note(digest: str, described: Any) -> None:
    """Keep the outline of an identity written by its digest, while a header is collected."""
    found = _COLLECTED.get()
    if found is not None and digest not in found:
        found[digest] = outline(described)


def section(outlines: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The `[identities]` lines: each digest and its kind, then its outline indented, by
    digest."""
    lines: list[str] = []
    for digest in sorted(outlines):
        head, *rest = outlines[digest] or ("",)
        lines.append(f"#{digest} {head}".rstrip())
        lines.extend(f"  {line}" for line in rest)
    return tuple(lines)


def read_section(lines: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """`section` read back: each digest's outline lines."""
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        if line.startswith("#"):
            digest, _, head = line[1:].partition(" ")
            current = found[digest] = [head] if head else []
        elif current is not None and line.startswith("  "):
            current.append(line[2:])
    return {digest: tuple(lines_) for digest, lines_ in found.items()}
