"""A snapshot of rendered units: what a source that drives another harness records.

`built.UnitsForm` records an `engine.rendered.UnitsRendered` (another harness's requests, one
unit per evaluated doc) through these functions: its facts are the same `SnapshotFacts` a
lighteval-style task records, so the check, the gate, the parser and format 3 judge it
unchanged.

    [task]         the source's header fields (name, version, dataset, splits, shots, output
                   type, metrics, filters, generation arguments, ...), then `docs: N`
    [settings]     the run settings (system prompt, chat template) and the source's own
                   (the harness's version, its chat rules)
    [doc hashes]   one hash per unit over its canonical fields (`canonical`), by label
    [doc K of N]   the first units in full: their fields, then each text behind `| `

Header values are written as themselves (strings escaped, plain data as JSON with sorted
keys); a callable or object inside one is written by its canonical identity (`identity`), so a
changed scoring hook is a content change while no memory address or absolute path is written.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..engine.line_text import escape_line, file_json, quote_text
from ..engine.paths import relative_path_text
from .canonical import canonical, typed_keys
from .facts import value_summary
from .fingerprint import DIGEST_SIZE

if TYPE_CHECKING:
    from pathlib import Path

    from ..engine.rendered import RenderedUnit, UnitsRendered


def unit_digest(unit: RenderedUnit) -> str:
    """A unit's hash: 16 hex digits over the canonical encoding of its fields."""
    text = canonical([typed_keys(unit.fields, "fields")], ("fields",))
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_SIZE
    ).hexdigest()


def header_value(value: Any, root: Path | None, path: str) -> str:
    """A `[task]` value as written: a string escaped, plain data as JSON (keys sorted), and
    any callable or object inside by its identity (`kind #digest`)."""
    if isinstance(value, str):
        return escape_line(relative_path_text(value, root))
    return file_json(_plain(value, root, path))


def _plain(value: Any, root: Path | None, path: str) -> Any:
    """`value` with every part JSON cannot hold as itself replaced by its identity text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(item, root, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _plain(value[key], root, f"{path}.{key}") for key in sorted(value)}
    return f"<{value_summary(value, root, path)}>"


def units_header(rendered: UnitsRendered, label: str, root: Path | None) -> dict[str, str]:
    """The `[task]` section of a rendered task's units: its name and version, the source's
    header values, then its doc count."""
    header = {
        "name": escape_line(label),
        "version": file_json(_plain(rendered.version, root, "version")),
    }
    for key, value in rendered.header.items():
        header[escape_line(key)] = header_value(value, root, key)
    header["docs"] = str(rendered.total)
    return header


def unit_block(position: int, total: int, unit: RenderedUnit) -> str:
    """One unit as a snapshot (and `--evaltasks-show`) shows it."""
    lines = [f"[doc {position + 1} of {total}] id={escape_line(unit.label)}"]
    for key, value in unit.shown:
        text = escape_line(value) if isinstance(value, str) else _shown_json(value)
        lines.append(f"{escape_line(key)}: {text}" if text else f"{escape_line(key)}:")
    for title, text in unit.texts:
        lines.append(f"--- {escape_line(title)} ---")
        lines.extend(quote_text(text))
    lines.append("--- end ---")
    return "\n".join(lines)


def _shown_json(value: Any) -> str:
    """A shown value as JSON; one JSON has no form for named by its type (the hash, not this
    line, is what is compared)."""
    try:
        return file_json(value)
    except (TypeError, ValueError):
        return escape_line(f"<{type(value).__name__}>")
