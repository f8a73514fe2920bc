"""Per-item results and the run summary: typed, and serialisable across xdist workers.

Each item attaches one `ItemResult` to its report as JSON (`user_properties`, which xdist sends
to the controller and JUnit XML records), and hands the result itself to its own process's
collector. The terminal summary and the Markdown report are built from those results alone.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
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


@dataclass(slots=True)
class Tally:
    """What the summary lines count, added up one result at a time: a run that keeps no
    result (no report, no results file, no `--snapshot-details`) holds these few numbers, not
    one result per item, however many items it has."""

    items: int = 0
    tasks: int = 0
    docs: int = 0
    partial: int = 0
    """Tasks checked against part of their recorded docs (`--evaltasks-max-samples`)."""
    checked: int = 0
    recorded: int = 0
    outcomes: Counter[Outcome] = field(default_factory=Counter)
    written: int = 0
    deleted: int = 0
    bumps: list[str] = field(default_factory=list)
    """The labels of the tasks that need a version bump."""

    @classmethod
    def of(cls, results: Iterable[ItemResult]) -> Tally:
        """The tally of `results`."""
        tally = cls()
        for result in results:
            tally.add(result)
        return tally

    def add(self, result: ItemResult) -> None:
        """Count one item's result."""
        self.items += 1
        if result.kind == "task":
            self.tasks += 1
            self.docs += result.docs
            if result.recorded_docs:
                self.partial += 1
                self.checked += result.checked
                self.recorded += result.recorded_docs
        self.outcomes[result.outcome] += 1
        self.written += result.written
        self.deleted += result.deleted
        if result.needs_bump:
            self.bumps.append(result.label)

    def lines(self) -> list[tuple[str, str | None]]:
        """The summary as (line, colour) pairs."""
        lines: list[tuple[str, str | None]] = [
            (f"{count(self.tasks, 'task')} checked, {count(self.docs, 'doc')} rendered", None)
        ]
        if self.partial:
            lines.append(
                (
                    f"partial run: {self.checked} of {self.recorded} recorded docs checked "
                    f"against their hashes in {count(self.partial, 'task')} "
                    f"(--evaltasks-max-samples)",
                    None,
                )
            )
        counts = self.outcomes
        buckets = ", ".join(f"{counts[o]} {o.value}" for o in Outcome if counts[o])
        if buckets:
            lines.append((f"outcomes: {buckets}", None))
        if self.deleted:
            lines.append((f"snapshots: {self.written} written, {self.deleted} deleted", None))
        elif self.written:
            lines.append((f"snapshots: {self.written} written", None))
        bumps = sorted(self.bumps)
        if bumps:
            verb = "needs" if len(bumps) == 1 else "need"
            lines.append((f"{count(len(bumps), 'task')} {verb} a version bump:", "red"))
            lines += [(f"  {label}", None) for label in bumps]
        return lines


@dataclass(slots=True)
class Collected:
    """A run's results as their reports arrive: always the tally; each result with its pytest
    outcome only when the run needs them all (the Markdown report, a results file,
    `--snapshot-details`). A corpus-sized run that asks for none keeps no result per item."""

    keep: bool
    tally: Tally = field(default_factory=Tally)
    kept: list[tuple[ItemResult, str]] = field(default_factory=list)
    finished: dict[str, ItemResult] = field(default_factory=dict)
    """Results this process's items finished, by node id, until their call-phase report takes
    them (passed on as they are: the JSON on the report is for other processes and files)."""

    def add(self, result: ItemResult, outcome: str) -> None:
        """Count an item's result, and keep it when the run needs every result."""
        self.tally.add(result)
        if self.keep:
            self.kept.append((result, outcome))

    def summary(self) -> RunSummary:
        """The kept results as a summary (the report's and `--snapshot-details`' input)."""
        return RunSummary([result for result, _ in self.kept])


@dataclass(frozen=True)
class RunSummary:
    """Counts over every item's result; each item in exactly one outcome bucket."""

    results: list[ItemResult]

    def lines(self) -> list[tuple[str, str | None]]:
        """The summary as (line, colour) pairs."""
        return Tally.of(self.results).lines()

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


@dataclass(frozen=True)
class Selection:
    """Why these items ran, as the run header says it: plain data for `markdown`."""

    mode: str = "compare"
    spec: str | None = None
    """The `--evaltasks` value; None: the node ids given chose the tasks."""
    tasks: int = 0
    """Tasks planned."""
    broken: int = 0
    orphans: int = 0
    changed: str | None = None
    """`--evaltasks-changed`: which tasks a change since the revision selected, and why."""
    base_ref: str | None = None
    """`--evaltasks-base`: the revision whose snapshots each task is also judged against."""
