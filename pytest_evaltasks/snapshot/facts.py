"""What a snapshot records about one task run: the facts the gate compares.

Pure functions, no pytest. `built.build_snapshot` fingerprints a rendered task and returns the
facts; the file's text is laid out by `layout` only when it is needed (to write it, or to show a
diff), and read back by `parse`.

    [task]           the task's coordinates, settings and scoring: a change here is content
    [settings]       run options that shape the rendered prompts (system prompt, template)
    [layout]         presentation only (docs shown in full): never a reason to pass or fail
    [inputs]         the project files the task's code read: what changed-only runs select by
    [fingerprint]    one hash over every section above but the layout
    [doc hashes]     one hash per doc, sorted by label, so a change names its docs

Every value is machine-independent: paths inside the root directory are recorded relative to
it, callables and objects by their canonical identity (`identity`), never by a memory address,
an absolute path or the private name a task module is imported under.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from ..engine.line_text import escape_line, file_json
from ..engine.metrics import MetricRef, metric_category, metric_name
from ..engine.paths import relative_path_text
from ..errors import UnrecordableValueError
from . import outline
from .canonical import UnencodableValue
from .identity import UnidentifiableValue, identity, identity_text
from .identity_parts import _digest, _dumps

T = TypeVar("T")

if TYPE_CHECKING:
    from pathlib import Path

    from ..engine.task import Task, TaskResult

FORMAT_VERSION = 5
"""Bump when anything that goes into the file or a hash changes; never a prompt change."""

READABLE_FORMATS = (2, 3, 4, 5)
"""Formats whose content this version can verify: format 2 through `format_v2`, format 3 with
its identities (`identity.format_3_identities`: bytecode digests, only the root's code own),
format 4 as format 5 without the `[identities]` outlines."""

OUTLINES_SINCE = 5
"""The first format whose files keep the outline of each identity they record by digest."""

DEFAULT_DOCS_SHOWN = 3

HASH_SEED_KEY = "hash_seed"
"""`[task]` key of a task built under a fixed PYTHONHASHSEED in a fresh process."""

SOURCE_KEY = "config_source"
"""`[task]` key of where a task's config file is, for a source whose configs are files (its own
form: a harness's own file may be written `<harness>:<path>`, a file its user does not own)."""

IDENTITY_KEYS = frozenset({"name", "version", HASH_SEED_KEY, SOURCE_KEY})
"""`[task]` keys that are not content: the task's name, the version the gate reads, how the
task is built and where its config file is (not what it holds)."""

OPTIONAL_CONFIG_FIELDS = (
    "solver",
    "scorer",
    "sample_fields",
    "sample_to_fewshot",
    "filter",
)
"""Config fields recorded when set: they change what lighteval sends or how it scores."""


@dataclass(frozen=True)
class SnapshotFacts:
    """What the gate and the summary compare, without the text.

    `hashes` is the doc hashes by label, or the text of a file's `[doc hashes]` section: a
    recorded file's hashes are parsed only when they differ from this run's (see `hash_text`).
    Values are the texts as written in the file (escaped where a character could not stand).
    """

    format_version: int
    task: dict[str, str]
    settings: dict[str, str]
    layout: dict[str, str]
    hashes: dict[str, str] | str
    inputs: tuple[str, ...] = ()
    """The project files the task's code read (relative to the root, sorted): what a
    changed-only run selects it by. Not content: a changed list is named as such."""
    identities: tuple[str, ...] = ()
    """The `[identities]` lines: the outline of each value `[task]` records by digest, so a
    changed digest can say what changed (`outline`). Explains, never decides: it is made
    from the identity the digest is made from."""

    @cached_property
    def doc_hashes(self) -> dict[str, str]:
        """Doc hash by doc label, in file order."""
        if isinstance(self.hashes, dict):
            return self.hashes
        parsed: dict[str, str] = {}
        for line in self.hashes.split("\n"):
            if line:
                label, _, digest = line.rpartition(" ")
                parsed[label] = digest
        return parsed

    @cached_property
    def hash_text(self) -> str:
        """The `[doc hashes]` lines, one `label digest` each: equal texts, equal hashes."""
        if isinstance(self.hashes, str):
            return self.hashes
        return "".join(f"{label} {digest}\n" for label, digest in self.hashes.items())

    @property
    def num_docs(self) -> int:
        """Docs hashed."""
        if isinstance(self.hashes, dict):
            return len(self.hashes)
        return self.hashes.count("\n")

    @property
    def label(self) -> str:
        """The task string of the snapshot's item, e.g. `mmlu:anatomy|5`."""
        return self.task.get("name", "")

    @property
    def version(self) -> str:
        """The task version as recorded (JSON: `0`, or `"1.2"`)."""
        return self.task.get("version", "")

    @property
    def docs_shown(self) -> int:
        """Docs laid out in full in the file."""
        value = self.layout.get("docs_shown", "")
        return int(value) if value.isdigit() else DEFAULT_DOCS_SHOWN

    @property
    def total_docs(self) -> int | None:
        """The task's evaluation docs (`docs:`), all of them whatever a run rendered."""
        value = self.task.get("docs", "")
        return int(value) if value.isdigit() else None

    @property
    def hash_seed(self) -> int | None:
        """The PYTHONHASHSEED the task is built under, in a fresh process; None: in-process."""
        value = self.task.get(HASH_SEED_KEY, "")
        return int(value) if value.isdigit() else None

    def content(self) -> dict[str, str]:
        """The `[task]` fields whose change is a content change."""
        return {key: value for key, value in self.task.items() if key not in IDENTITY_KEYS}

    def fingerprint(self) -> str:
        """The `[fingerprint]` of these facts, as their format computes it."""
        if self.format_version == 2:
            from .format_v2 import fingerprint

            return fingerprint(self.hash_text)
        return content_fingerprint(self)


def content_fingerprint(facts: SnapshotFacts) -> str:
    """One hash over every compared line: `[task]`, `[settings]` and the doc hashes, so a hand
    edit anywhere in them is seen when the file is read."""
    lines = [f"format {facts.format_version}", "[task]"]
    lines += [f"{key}: {value}" for key, value in facts.task.items()]
    lines.append("[settings]")
    lines += [f"{key}: {value}" for key, value in facts.settings.items()]
    lines.append("[inputs]")
    lines += list(facts.inputs)
    if facts.format_version >= OUTLINES_SINCE:
        lines.append("[identities]")
        lines += list(facts.identities)
    lines.append("[doc hashes]")
    text = "\n".join(lines) + "\n" + facts.hash_text
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprinted(
    task_label: str,
    items: Iterable[tuple[str, T]],
    digest: Callable[[T], str],
    header: Callable[[], dict[str, str]],
) -> tuple[str, dict[str, str]]:
    """The `[doc hashes]` text (each item's hash by its label as recorded, in label order),
    then the `[task]` header; a value that has no record is named with the doc, or the config,
    it is in (the first such doc in evaluation order)."""
    listed = items if isinstance(items, list) else list(items)
    where = ""
    try:
        ordered = _by_row_number(listed)
        if ordered is None:
            hashes: dict[str, str] = {}
            for where, item in listed:
                hashes[escape_line(where)] = digest(item)
            where = ""
            text = "".join(
                f"{label} {value}\n"
                for label, value in sorted(hashes.items(), key=lambda pair: label_key(pair[0]))
            )
        else:
            try:
                text = _hash_lines(ordered, digest)
            except (UnencodableValue, UnidentifiableValue):
                for where, item in listed:  # noqa: B007 - named by the handler below
                    digest(item)
                raise
        return text, header()
    except (UnencodableValue, UnidentifiableValue) as exc:
        place = f"doc {where}" if where else "config"
        raise UnrecordableValueError(f"task {task_label!r}: {place}: {exc}") from None


HASH_CHUNK = 4096
"""Hash lines joined into one string at a time: a large task's lines are never all alive as
separate strings."""


def _hash_lines(ordered: list[tuple[str, T] | None], digest: Callable[[T], str]) -> str:
    """The `label digest` lines of items already in label order (None slots skipped).

    Written as text from the start: a dict of labels and digests would hold two strings and an
    entry per doc, and the text is what the gate compares. An item's hash does not depend on
    which items were hashed before it, so hashing in label order gives the same digests.
    """
    chunks: list[str] = []
    lines: list[str] = []
    for entry in ordered:
        if entry is not None:
            lines.append(f"{entry[0]} {digest(entry[1])}\n")
            if len(lines) == HASH_CHUNK:
                chunks.append("".join(lines))
                lines.clear()
    chunks.append("".join(lines))
    return "".join(chunks)


def _by_row_number(items: list[tuple[str, T]]) -> list[tuple[str, T] | None] | None:
    """Items whose labels are distinct row numbers (the usual case: one evaluation split),
    placed by number, which is their label order, without a sort; None for any other labels
    (split-prefixed, repeated, or beyond the item count), which are sorted instead."""
    slots: list[tuple[str, T] | None] = [None] * len(items)
    for item in items:
        label = item[0]
        if not (label.isascii() and label.isdecimal()) or (label[0] == "0" and label != "0"):
            return None
        number = int(label)
        if number >= len(slots) or slots[number] is not None:
            return None
        slots[number] = item
    return slots


def recorded_facts(
    header: dict[str, str],
    settings: dict[str, str],
    hashes: str,
    hash_seed: int | None,
    inputs: Iterable[str],
    format_version: int = FORMAT_VERSION,
    identities: tuple[str, ...] = (),
) -> SnapshotFacts:
    """The facts of a run as format 3 and later record them: the `[doc hashes]` text (in label
    order, see `fingerprinted`), inputs sorted."""
    if hash_seed is not None:
        header = _with_hash_seed(header, hash_seed)
    return SnapshotFacts(
        format_version=format_version,
        task=header,
        settings=settings,
        layout={},
        hashes=hashes,
        inputs=tuple(escape_line(path) for path in sorted(inputs)),
        identities=identities,
    )


def _with_hash_seed(header: dict[str, str], hash_seed: int) -> dict[str, str]:
    """The header with the hash seed recorded before the doc counts."""
    items = list(header.items())
    at = next((i for i, (key, _) in enumerate(items) if key == "docs"), len(items))
    items.insert(at, (HASH_SEED_KEY, str(hash_seed)))
    return dict(items)


def task_fields(
    task: Task, result: TaskResult, root: Path | None, label: str | None = None
) -> dict[str, str]:
    """The `[task]` section: the task's own fields, independent of run settings and of the
    machine, and the same whatever number of docs a run renders. `label` is the item's name
    (the task string, with the rendering after it, e.g. `mmlu:anatomy|5 [chatml]`)."""
    config = task.config
    repo = relative_path_text(config.hf_repo, root)
    header: dict[str, str] = {
        "name": escape_line(label or result.request.label),
        "version": file_json(config.version),
        "dataset": escape_line(
            f"{repo} / {config.hf_subset or 'default'} @ {config.hf_revision or 'default revision'}"
        ),
        "data_files": file_json(_relative_files(config.hf_data_files, root)),
        "evaluation_splits": escape_line(", ".join(config.evaluation_splits)),
        "few_shots_split": escape_line(task.fewshot_split or ", ".join(config.evaluation_splits)),
    }
    if result.pool_from_eval:
        header["few_shots_warning"] = (
            "WARNING: no few-shot split, so examples come from the evaluation split itself"
            + (" (unused at 0 shots)" if result.pool_size is None else "")
        )
    header.update(
        {
            "few_shots_select": config.few_shots_select or "balanced",
            "num_fewshots": str(result.request.num_fewshots),
            "generation_size": file_json(config.generation_size),
            "stop_sequences": file_json(list(config.stop_sequence or [])),
            "num_samples": file_json(config.num_samples),
            "metrics": ", ".join(metric_identity(metric, root) for metric in config.metrics) or "-",
            "metric_params": identity_text(dict(result.request.metric_params), root, "params")
            if result.request.metric_params
            else "-",
        }
    )
    if config.truncate_fewshots:
        header["truncate_fewshots"] = "true"
    for name in OPTIONAL_CONFIG_FIELDS:
        value = getattr(config, name)
        if value is not None:
            header[name] = value_summary(value, root, name)
    for name, value in sorted(config.extra_fields.items()):
        header[f"config.{escape_line(name)}"] = value_summary(value, root, name)
    header["docs"] = str(result.num_eval_docs)
    header["fewshot_pool"] = (
        "not loaded (0-shot)" if result.pool_size is None else f"{result.pool_size} docs"
    )
    return header


def _relative_files(value: Any, root: Path | None) -> Any:
    """`hf_data_files` with paths inside the root relative to it (they are often built from
    `__file__`, which differs from clone to clone)."""
    if isinstance(value, str):
        return relative_path_text(value, root)
    if isinstance(value, (list, tuple)):
        return [_relative_files(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _relative_files(item, root) for key, item in value.items()}
    return value


SUMMARY_LIMIT = 160
"""Characters of a value's canonical text recorded in full; longer ones by digest."""


def value_summary(value: Any, root: Path | None, path: str) -> str:
    """A config value as recorded: its canonical text when short, else what it is and a digest
    of its identity (a change anywhere in it changes the digest)."""
    described = identity(value, root, path)
    text = _dumps(described)
    if len(text) <= SUMMARY_LIMIT and _is_plain(value):
        return escape_line(text)
    return escape_line(f"{_kind(described)} #{_outlined(described, text)}")


def _outlined(described: Any, text: str) -> str:
    """The digest an identity is recorded by, its outline kept for the `[identities]`
    section (`outline`)."""
    digest = _digest(text)
    outline.note(digest, described)
    return digest


def _is_plain(value: Any) -> bool:
    """Data that reads as itself: no callables or objects inside."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_plain(item) for item in value)
    if isinstance(value, dict):
        return all(type(key) is str and _is_plain(item) for key, item in value.items())
    return False


def _kind(described: Any) -> str:
    """A short name for an identity: the callable's or class's location, else its type."""
    if isinstance(described, dict):
        for key in (
            "__function__",
            "__partial__",
            "__method__",
            "__builtin__",
            "__type__",
            "__object__",
            "__enum__",
            "__module__",
        ):
            inner = described.get(key)
            if isinstance(inner, str):
                return inner
            if isinstance(inner, dict):
                return _kind(inner)
    return type(described).__name__


def metric_identity(metric: Any, root: Path | None = None) -> str:
    """What the snapshot records for one metric, so that swapping it is a content change.

    Our `MetricRef` (or a member holding one) is named by member and parameters. Any other
    object is named by type, display name and category, plus a digest of its whole canonical
    identity (scoring functions, their code when it is the project's, their settings, private
    attributes and slots included).
    """
    if isinstance(metric, Enum) and isinstance(metric.value, MetricRef):
        metric = metric.value
    if isinstance(metric, MetricRef):
        params = ", ".join(
            f"{key}={value_summary(value, root, f'metric {metric.name} {key}')}"
            for key, value in sorted(metric.params, key=lambda item: item[0])
        )
        names = metric.metric_name
        joined = ",".join(names) if isinstance(names, tuple) else str(names)
        suffix = f"; {metric.category.value}" if metric.category is not None else ""
        return escape_line(f"{metric.name}{f'({params})' if params else ''} [{joined}{suffix}]")
    if isinstance(metric, str):
        return escape_line(metric)
    category = metric_category(metric)
    label = f"{metric_name(metric)}{f'; {category}' if category else ''}"
    described = identity(metric, root, f"metric {metric_name(metric)}")
    digest = _outlined(described, _dumps(described))
    return escape_line(f"{type(metric).__name__} [{label}] #{digest}")


def label_key(label: str) -> tuple[str, int, str]:
    """Sort `12` before `100`, and `split/3` labels by split then number."""
    split, _, ident = label.rpartition("/")
    return (split, int(ident), "") if ident.isdigit() else (split, -1, ident)
