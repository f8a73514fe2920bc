"""Per-item results and the run summary: typed, and serialisable across xdist workers.

Each item attaches one `ItemResult` to its report as JSON (`user_properties`, which xdist sends
to the controller and JUnit XML records). The terminal summary and the Markdown report are built
from those results alone.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields

from ..snapshot.gate import Outcome

RESULT_KEY = "evaltasks"


@dataclass(slots=True)
class ItemResult:
    """What one item found and did."""

    label: str
    kind: str = "task"
    """`task`, `module` (a task module that failed to import) or `orphan` (a snapshot file)."""
    snapshot: str | None = None
    """The snapshot file the item checks, relative to the root; None for a module."""
    outcome: Outcome = Outcome.ERROR
    docs: int = 0
    """Docs rendered."""
    checked: int = 0
    recorded_docs: int = 0
    """A partial run (`--evaltasks-max-samples`): docs checked of those the snapshot records."""
    changed_docs: int = 0
    version_before: str | None = None
    version_after: str | None = None
    written: bool = False
    deleted: bool = False
    headline: str = ""
    details: list[str] = field(default_factory=list)
    """The failure body (capped), for the Markdown report."""
    lint: list[str] = field(default_factory=list)
    """Lint findings, one line each."""

    @property
    def needs_bump(self) -> bool:
        """Content changed but the version did not go up."""
        return self.outcome is Outcome.UNVERSIONED and not self.written

    def to_json(self) -> str:
        """The result as JSON text (every item makes one: no `asdict` deep copy)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, object]:
        """The result as plain JSON values, every field (the outcome as its text)."""
        return {name: getattr(self, name) for name in _FIELDS}

    @classmethod
    def from_json(cls, text: str) -> ItemResult:
        """Read back `to_json`."""
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ItemResult:
        """Read back `to_dict`; a missing or unknown field, a wrong type or an unknown outcome
        raises `ValueError` (or `TypeError`)."""
        data = dict(data)
        unknown = set(data) - set(_FIELDS)
        if unknown:
            raise ValueError(f"unknown fields {', '.join(sorted(unknown))}")
        data["outcome"] = Outcome(str(data.get("outcome")))
        return cls(**data)  # type: ignore[arg-type]


_FIELDS = tuple(field.name for field in fields(ItemResult))


@dataclass(frozen=True)
class RunSummary:
    """Counts over every item's result; each item in exactly one outcome bucket."""

    results: list[ItemResult]

    def lines(self) -> list[tuple[str, str | None]]:
        """The summary as (line, colour) pairs."""
        results = self.results
        tasks = [r for r in results if r.kind == "task"]
        docs = sum(r.docs for r in tasks)
        lines: list[tuple[str, str | None]] = [
            (f"{count(len(tasks), 'task')} checked, {count(docs, 'doc')} rendered", None)
        ]
        partial = [r for r in tasks if r.recorded_docs]
        if partial:
            checked = sum(r.checked for r in partial)
            recorded = sum(r.recorded_docs for r in partial)
            lines.append(
                (
                    f"partial run: {checked} of {recorded} recorded docs checked against their "
                    f"hashes in {count(len(partial), 'task')} (--evaltasks-max-samples)",
                    None,
                )
            )
        counts = Counter(r.outcome for r in results)
        buckets = ", ".join(f"{counts[o]} {o.value}" for o in Outcome if counts[o])
        if buckets:
            lines.append((f"outcomes: {buckets}", None))
        written = sum(r.written for r in results)
        deleted = sum(r.deleted for r in results)
        if deleted:
            lines.append((f"snapshots: {written} written, {deleted} deleted", None))
        elif written:
            lines.append((f"snapshots: {written} written", None))
        bumps = sorted(r.label for r in results if r.needs_bump)
        if bumps:
            verb = "needs" if len(bumps) == 1 else "need"
            lines.append((f"{count(len(bumps), 'task')} {verb} a version bump:", "red"))
            lines += [(f"  {label}", None) for label in bumps]
        return lines

    def detail_lines(self) -> list[str]:
        """`--snapshot-details`: every item's outcome and snapshot file, one line each (what
        was written or deleted too), tasks first, then modules and orphans, by name."""
        order = {"task": 0, "module": 1, "orphan": 2}
        results = sorted(self.results, key=lambda r: (order.get(r.kind, 3), r.label))
        lines = [f"snapshot details ({count(len(results), 'item')}):"]
        for result in results:
            done = ", written" if result.written else ", deleted" if result.deleted else ""
            where = "" if result.snapshot in (None, result.label) else f" ({result.snapshot})"
            lines.append(f"  {result.label}: {result.outcome.value}{done}{where}")
        return lines


def count(number: int, noun: str) -> str:
    """`1 task`, `2 tasks`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
