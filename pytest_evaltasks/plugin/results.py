"""`--evaltasks-results=FILE`: a run's results as data, and the merge of several runs' files.

A run over many machines (pytest-split's `--splits N --group I`, one CI job per group) writes
one results file per shard: every item's `ItemResult` and pytest outcome, the run's selection
facts (what `--evaltasks-report` puts in its header) and the shard's split parameters. One job
then merges them into the report an unsharded run of the same items writes, byte for byte:

    python -m pytest_evaltasks.plugin.report merge shard-*.json --output report.md

The merge appends the report to `$GITHUB_STEP_SUMMARY` as a run does. It checks what makes the
shards one run: the same selection (task string, mode, counts, what changed, the base), the same
split (`--splits`, algorithm, durations file), every group once, every item in one shard. What
does not hold is said at the top of the report and on stderr, and the merge exits 1; so does a
merged run with a failing item (the merge job can be the one required check). Exit 2: a usage
error, or a file that is not a results file (nothing is written).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_type_hints

from ..files import write_atomic
from .summary import ItemResult, RunSummary, Selection, count

if TYPE_CHECKING:
    import pytest

FORMAT = "pytest-evaltasks results"
VERSION = 1
PROG = "python -m pytest_evaltasks.plugin.report merge"


class ResultsError(ValueError):
    """A file that is not a readable results file; the message names it."""


@dataclass(frozen=True)
class Shard:
    """pytest-split's parameters of one run: which group of how many, and split how."""

    splits: int
    group: int
    algorithm: str | None = None
    durations: str | None = None
    """`sha256:...` of the durations file pytest-split read; None when there was none."""


@dataclass(frozen=True)
class RunResults:
    """One results file, read back."""

    source: str
    """The file, as given (for messages)."""
    selection: Selection
    items: list[tuple[ItemResult, str]]
    """Each item's result and pytest outcome, by label."""
    shard: Shard | None = None


# --- writing (a pytest run) ----------------------------------------------------------------


def shard_of(config: pytest.Config) -> Shard | None:
    """pytest-split's group of this run (`--splits N --group I`), or None when not split."""
    option = config.option
    splits, group = getattr(option, "splits", None), getattr(option, "group", None)
    if not splits or not group:
        return None
    durations = None
    path = getattr(option, "durations_path", None)
    if path:
        try:
            durations = "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()
        except OSError:
            durations = None  # pytest-split splits evenly without one
    algorithm = getattr(option, "splitting_algorithm", None)
    return Shard(int(splits), int(group), str(algorithm) if algorithm else None, durations)


def document(
    selection: Selection, collected: Sequence[tuple[ItemResult, str]], shard: Shard | None
) -> bytes:
    """The results file: UTF-8 JSON, items by label (the same bytes serially and under `-n`);
    a file holding a lone surrogate (which UTF-8 cannot hold) is all `\\u` escapes."""
    data = {
        "format": FORMAT,
        "version": VERSION,
        "selection": asdict(selection),
        "shard": asdict(shard) if shard is not None else None,
        "items": [
            {"pytest": outcome, "result": result.to_dict()}
            for result, outcome in sorted(collected, key=lambda pair: pair[0].label)
        ],
    }
    text = json.dumps(data, ensure_ascii=False, indent=1)
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(data, ensure_ascii=True, indent=1) + "\n").encode("ascii")


def write(
    path: Path,
    selection: Selection,
    collected: Sequence[tuple[ItemResult, str]],
    shard: Shard | None,
) -> str | None:
    """Write the results file atomically; what went wrong, or None."""
    try:
        write_atomic(path, document(selection, collected, shard))
    except OSError as exc:
        return f"the results were not written: {exc}"
    return None


# --- reading -----------------------------------------------------------------------------------


def read(path: Path, source: str | None = None) -> RunResults:
    """A results file; `ResultsError` when it cannot be read or is not one."""
    source = source or str(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ResultsError(f"{source}: cannot be read: {exc.strerror or exc}") from None
    return parse(data, source)


def parse(text: bytes, source: str) -> RunResults:
    """A results file's bytes (`document`'s), read back; `ResultsError` naming `source` and
    what is wrong when they are not a results file."""
    try:
        data = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{source}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsError(
            f"{source}: not a results file of pytest-evaltasks (write one with "
            f"--evaltasks-results=FILE)"
        )
    if data.get("version") != VERSION:
        raise ResultsError(
            f"{source}: results format version {data.get('version')!r}; this pytest-evaltasks "
            f"reads version {VERSION} (merge the files with the version that wrote them)"
        )
    try:
        selection = Selection(**_checked(Selection, data.get("selection"), "selection"))
        shard_data = data.get("shard")
        shard = Shard(**_checked(Shard, shard_data, "shard")) if shard_data is not None else None
        items = data.get("items")
        if not isinstance(items, list):
            raise ValueError("items: not a list")
        pairs = []
        for position, item in enumerate(items):
            where = f"items[{position}]"
            if not isinstance(item, dict) or not isinstance(item.get("pytest"), str):
                raise ValueError(f"{where}: not an object with a `pytest` outcome")
            fields_ = _checked(ItemResult, item.get("result"), f"{where}.result", ("outcome",))
            pairs.append((ItemResult.from_dict(fields_), item["pytest"]))
    except (TypeError, ValueError) as exc:
        raise ResultsError(f"{source}: not a valid results file: {exc}") from None
    return RunResults(source, selection, pairs, shard)


def _checked(
    kind: type[Any], data: object, where: str, skip: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`data` as the keyword arguments of dataclass `kind`, each value of its field's type
    (str, int, bool, str | None, list[str]); `ValueError` naming what is wrong."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: not an object")
    hints = get_type_hints(kind)
    known = {field.name for field in fields(kind)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{where}: unknown field {unknown[0]!r}")
    for name, value in data.items():
        if name in skip:
            continue
        if not _of_type(value, hints[name]):
            raise ValueError(f"{where}.{name}: {value!r} is not {hints[name]}")
    return dict(data)


def _of_type(value: object, hint: object) -> bool:
    if hint is str:
        return isinstance(value, str)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint == str | None:
        return value is None or isinstance(value, str)
    if hint == int | None:
        return value is None or (isinstance(value, int) and not isinstance(value, bool))
    if hint == list[str]:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return True


# --- merging -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Merged:
    """Several runs as one: the report's inputs, and what does not add up."""

    selection: Selection
    summary: RunSummary
    outcomes: dict[str, str]
    problems: list[str]

    @property
    def failed(self) -> int:
        """Items whose pytest outcome is not `passed`."""
        return sum(outcome != "passed" for outcome in self.outcomes.values())


_SELECTION_FACTS = {
    "spec": "the task string",
    "mode": "the mode",
    "tasks": "the tasks planned",
    "broken": "the broken task modules",
    "orphans": "the orphan snapshots",
    "changed": "what changed (--evaltasks-changed)",
    "base_ref": "the base (--evaltasks-base)",
}


def merge(runs: Sequence[RunResults]) -> Merged:
    """The runs' items as one run's (an item that ran twice counted once); the first run's
    selection; and a problem for each way the runs are not the shards of one run."""
    if not runs:
        raise ValueError("no results to merge")
    problems = _selection_problems(runs) + _shard_problems(runs)
    seen: dict[str, str] = {}
    twice: dict[str, list[str]] = {}
    results: list[ItemResult] = []
    outcomes: dict[str, str] = {}
    for run in runs:
        for result, outcome in run.items:
            if result.label in seen:
                twice.setdefault(result.label, [seen[result.label]]).append(run.source)
                continue
            seen[result.label] = run.source
            results.append(result)
            outcomes[result.label] = outcome
    if twice:
        shown = "; ".join(
            f"{label} ({', '.join(sources)})" for label, sources in sorted(twice.items())[:10]
        )
        more = f"; and {len(twice) - 10} more" if len(twice) > 10 else ""
        problems.append(
            f"{count(len(twice), 'item')} ran in more than one results file, counted once: "
            f"{shown}{more}"
        )
    return Merged(runs[0].selection, RunSummary(results), outcomes, problems)


def _selection_problems(runs: Sequence[RunResults]) -> list[str]:
    """A line per selection fact the runs do not agree on."""
    problems = []
    for name, what in _SELECTION_FACTS.items():
        shown = _disagreement([(getattr(run.selection, name), run.source) for run in runs])
        if shown:
            problems.append(f"the results disagree on {what}: {shown}")
    return problems


def _disagreement(values: list[tuple[object, str]]) -> str | None:
    """`'all' in a.json; 'mmlu' in b.json` when the (value, source) pairs hold more than one
    value; None when they agree."""
    sources: dict[object, list[str]] = {}
    for value, source in values:
        sources.setdefault(value, []).append(source)
    if len(sources) < 2:
        return None
    return "; ".join(f"{_fact(value)} in {_sources(where)}" for value, where in sources.items())


def _shard_problems(runs: Sequence[RunResults]) -> list[str]:
    """Lines for a split that is not one: unsplit runs among shards, different split
    parameters, a group missing or given twice."""
    shards = [run for run in runs if run.shard is not None]
    if not shards:
        return []
    problems = []
    unsplit = [run.source for run in runs if run.shard is None]
    if unsplit:
        problems.append(
            f"{_sources(unsplit)} {'is' if len(unsplit) == 1 else 'are'} not a pytest-split "
            f"shard (no --splits/--group) but the other results are"
        )
    for name, what in (
        ("splits", "--splits"),
        ("algorithm", "--splitting-algorithm"),
        ("durations", "the durations file (--durations-path)"),
    ):
        shown = _disagreement([(getattr(run.shard, name), run.source) for run in shards])
        if shown:
            problems.append(
                f"the shards were split differently, so items may have run twice or not at "
                f"all: {what}: {shown}"
            )
    splits = max(run.shard.splits for run in shards if run.shard is not None)
    groups: dict[int, list[str]] = {}
    for run in shards:
        assert run.shard is not None
        groups.setdefault(run.shard.group, []).append(run.source)
    missing = [group for group in range(1, splits + 1) if group not in groups]
    if missing:
        which = ", ".join(str(group) for group in missing)
        problems.append(
            f"{'group' if len(missing) == 1 else 'groups'} {which} of {splits} missing: no "
            f"results file of {'it' if len(missing) == 1 else 'them'} was given (did that shard's "
            f"job finish and upload its file?), so its items are not in this report"
        )
    for group, sources in sorted(groups.items()):
        if len(sources) > 1:
            problems.append(f"group {group} of {splits} given more than once: {_sources(sources)}")
    return problems


def _fact(value: object) -> str:
    if value is None:
        return "none"
    return repr(value) if isinstance(value, str) else str(value)


def _sources(sources: list[str]) -> str:
    shown = ", ".join(sources[:5])
    return shown + (f" and {len(sources) - 5} more" if len(sources) > 5 else "")
