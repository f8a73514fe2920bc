"""The per-task snapshot file: what a reviewer reads, and what the version gate compares.

Pure functions, no pytest. `build_snapshot` fingerprints a task's finished docs and returns the
facts the gate compares; the text is laid out only when it is needed (to write it, or to show
a diff). `parse_snapshot` reads the facts back, whatever line endings the file came with.

    [task]           the task's coordinates and settings: a change here is a content change
    [settings]       run options that shape the rendered prompts (system prompt, template)
    [layout]         presentation only (docs shown in full): never a reason to pass or fail
    [fingerprint]    one hash over every doc hash
    [doc hashes]     one hash per doc, sorted by label, so a change names its docs
    [doc N of M]     the first docs in full: the prompt exactly as sent, choices, golds
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..engine.metrics import metric_identity
from ..engine.rendering import render_messages, render_plain
from .canonical import plain_value
from .fingerprint import DocHasher, fingerprint
from .settings import RunSettings

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.doc import Doc
    from ..engine.task import Task, TaskResult

FORMAT_VERSION = 2
"""Bump when anything that goes into the file or a hash changes; never a prompt change."""

FIRST_LINE = "# pytest-evaltasks snapshot, format"

MESSAGES = "messages"
"""`--evaltasks-chat-template messages`: record the chat-API message list, not a template."""

DEFAULT_DOCS_SHOWN = 3

IDENTITY_KEYS = frozenset({"name", "version"})
"""`[task]` keys that are not content: the task's name, and the version the gate reads."""


class SnapshotFileError(ValueError):
    """A snapshot file that cannot be read back: corrupted, truncated, or mid-merge."""


@dataclass(frozen=True)
class SnapshotFacts:
    """What the gate and the summary compare, without the text.

    `hashes` is the doc hashes by label, or the text of a file's `[doc hashes]` section: a
    recorded file's hashes are parsed only when they differ from this run's (see `hash_text`).
    """

    format_version: int
    task: dict[str, str]
    settings: dict[str, str]
    layout: dict[str, str]
    hashes: dict[str, str] | str

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
    def max_samples(self) -> str:
        """`all`, or the number of docs rendered."""
        return self.settings.get("max_samples", "all")

    def content(self) -> dict[str, str]:
        """The `[task]` fields whose change is a content change."""
        return {key: value for key, value in self.task.items() if key not in IDENTITY_KEYS}


class BuiltSnapshot:
    """One task run, fingerprinted; its text is laid out on demand."""

    def __init__(
        self,
        task: Task,
        result: TaskResult,
        settings: RunSettings,
        template: ChatTemplate | None,
    ) -> None:
        self.task = task
        self.result = result
        self.settings = settings
        self.template = template
        hasher = DocHasher()
        hashes = {label: hasher.digest(doc) for label, doc in result.docs}
        self.facts = SnapshotFacts(
            format_version=FORMAT_VERSION,
            task=task_header(task, result),
            settings=settings.recorded(),
            layout={},
            hashes=dict(sorted(hashes.items(), key=lambda item: label_key(item[0]))),
        )

    def text(self, docs_shown: int) -> str:
        """The whole file, with the first `docs_shown` docs in full."""
        return layout(self.facts, docs_shown, self._blocks(docs_shown))

    def shown_text(self, docs_shown: int) -> str:
        """The part of the file after the doc hashes: the docs shown in full."""
        return "".join(f"\n{block}\n" for block in self._blocks(docs_shown))

    def _blocks(self, docs_shown: int) -> list[str]:
        return [self.doc_block(position) for position in range(min(docs_shown, self.size))]

    @property
    def size(self) -> int:
        """Docs rendered."""
        return len(self.result.docs)

    def position_of(self, label: str) -> int | None:
        """A doc's position in evaluation order."""
        for position, (candidate, _) in enumerate(self.result.docs):
            if candidate == label:
                return position
        return None

    def doc_block(self, position: int) -> str:
        """One doc in full: ids, the prompt exactly as sent, choices and golds."""
        label, doc = self.result.docs[position]
        return doc_block(position, self.size, label, doc, self.settings, self.template)


def doc_block(
    position: int,
    total: int,
    label: str,
    doc: Doc,
    settings: RunSettings,
    template: ChatTemplate | None,
) -> str:
    """One doc in full, as a snapshot shows it: the prompt exactly as sent (plain text with the
    system prompt, and through the run's chat rendering), the few-shot ids, choices and golds."""
    lines = [f"[doc {position + 1} of {total}] id={label}", *doc_field_lines(doc)]
    lines.append("--- prompt (plain text) ---")
    lines.extend(quoted(render_plain(doc, settings.system_prompt)))
    chat = _chat(doc, settings, template)
    if isinstance(chat, list):
        lines.append("--- prompt (chat messages) ---")
        for message in chat:
            lines.append(f"<{message['role']}>")
            lines.extend(quoted(message["content"]))
    elif chat is not None:
        lines.append(f"--- prompt (chat template {settings.chat_template}) ---")
        lines.extend(quoted(chat))
    lines.append("--- end ---")
    return "\n".join(lines)


def _chat(
    doc: Doc, settings: RunSettings, template: ChatTemplate | None
) -> str | list[dict[str, str]] | None:
    """The doc through the run's chat rendering, if any."""
    if settings.chat_template == MESSAGES:
        return render_messages(doc, settings.system_prompt)
    if template is None:
        return None
    from ..engine.chat_template import apply_chat_template

    return apply_chat_template(template, render_messages(doc, settings.system_prompt))


def build_snapshot(
    task: Task,
    result: TaskResult,
    settings: RunSettings,
    template: ChatTemplate | None = None,
) -> BuiltSnapshot:
    """Fingerprint every doc of a finished task run."""
    return BuiltSnapshot(task, result, settings, template)


def task_header(task: Task, result: TaskResult) -> dict[str, str]:
    """The `[task]` section: the task's own fields, independent of run settings."""
    config = task.config
    header: dict[str, str] = {
        "name": result.request.label,
        "version": _json(config.version),
        "dataset": f"{config.hf_repo} / {config.hf_subset or 'default'}"
        f" @ {config.hf_revision or 'default revision'}",
        "data_files": _json(config.hf_data_files),
        "evaluation_splits": ", ".join(config.evaluation_splits),
        "few_shots_split": task.fewshot_split or ", ".join(config.evaluation_splits),
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
            "generation_size": _json(config.generation_size),
            "stop_sequences": _json(list(config.stop_sequence or [])),
            "num_samples": _json(config.num_samples),
            "metrics": ", ".join(metric_identity(metric) for metric in config.metrics) or "-",
            "metric_params": _json(dict(result.request.metric_params))
            if result.request.metric_params
            else "-",
            "docs": str(result.num_eval_docs),
            "fewshot_pool": _pool_line(result),
        }
    )
    return header


def _pool_line(result: TaskResult) -> str:
    """Pool size, or why there is none; counts docs that got fewer examples than asked."""
    if result.pool_size is None:
        return "not loaded (0-shot)"
    line = f"{result.pool_size} docs"
    if result.shortfall:
        line += f"; {result.shortfall} docs got fewer than {result.request.num_fewshots} examples"
    return line


OPTIONAL_FIELDS = (
    "instruction",
    "specific",
    "unconditioned_query",
    "original_query",
    "fewshot_sorting_class",
    "generation_grammar",
)


def doc_field_lines(doc: Doc) -> list[str]:
    """The doc's fields a reviewer needs beside its prompt; optional ones only when set."""
    lines = [
        f"fewshot_ids: {', '.join(example.id for example in doc.fewshot_samples) or '-'}",
        f"choices: {_json(doc.choices)}",
        f"gold_index: {_json(doc.gold_index)}",
        f"golds: {_json(doc.get_golds())}",
    ]
    for name in OPTIONAL_FIELDS:
        value = getattr(doc, name)
        if value is not None:
            lines.append(f"{name}: {_json(value)}")
    if doc.images:
        lines.append(f"images: {len(doc.images)}")
    methods = [str(getattr(method, "value", method)) for method in doc.sampling_methods]
    lines.append(
        f"sampling: {', '.join(methods) or '-'}; generation_size {_json(doc.generation_size)}; "
        f"stop {_json(doc.stop_sequences)}; num_samples {doc.num_samples}; "
        f"use_logits {_json(doc.use_logits)}"
    )
    return lines


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_TRAILING_SPACES = re.compile(r" +$")
VISIBLE_SPACE = "\u2420"
"""Trailing spaces of a prompt line are shown as `␠`, so no editor or checkout can strip them."""


def quoted(text: str) -> list[str]:
    """Each line behind `| `: leading and trailing blank lines and indentation stay visible.

    Control characters are written as `\\xNN` and trailing spaces as `␠`: every character a
    reviewer cannot see, or a tool could strip, is visible.
    """
    visible = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    visible = visible.encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    lines = []
    for line in visible.split("\n"):
        line = _TRAILING_SPACES.sub(lambda match: VISIBLE_SPACE * len(match.group()), line)
        lines.append("|" + (" " + line if line else ""))
    return lines


def layout(facts: SnapshotFacts, docs_shown: int, shown: Sequence[str]) -> str:
    """The whole file, always with LF line endings."""
    parts = [
        f"{FIRST_LINE} {facts.format_version}",
        "# Generated by `pytest --evaltasks ... --snapshot-update`. Review the diff like code.",
        "",
        "[task]",
        *(f"{key}: {value}" for key, value in facts.task.items()),
        "",
        "[settings]",
        *(f"{key}: {value}" for key, value in facts.settings.items()),
        "",
        "[layout]",
        f"docs_shown: {docs_shown}",
        "",
        "[fingerprint]",
        f"content: sha256:{fingerprint(facts.hash_text)}",
        "",
        f"[doc hashes] {facts.num_docs} docs, by id",
    ]
    tail = "".join(f"\n{block}\n" for block in shown)
    return "\n".join(parts) + "\n" + facts.hash_text + tail


_CONFLICT = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)


def recorded_shown_text(text: str) -> str:
    """The docs shown in full in a recorded file, normalised: what `shown_text` lays out.

    With the facts equal (the gate compared them), this is all that is left to compare: a
    cheaper check than laying out and comparing the whole file.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    start = text.find("\n[doc 1 of ")
    if start == -1:
        return ""
    return "".join(f"{line.rstrip()}\n" for line in text[start:].rstrip("\n").split("\n"))


def normalise(text: str) -> str:
    """The text as compared: LF line endings, no trailing spaces, one final newline."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


def parse_snapshot(text: str) -> SnapshotFacts:
    """Read back the recorded sections; tolerant of CRLF, trailing spaces, no final newline."""
    text = normalise(text)
    conflict = _CONFLICT.search(text)
    if conflict is not None:
        number = text.count("\n", 0, conflict.start()) + 1
        raise SnapshotFileError(
            f"has unresolved git conflict markers (line {number}): resolve the conflict, or "
            f"delete the file and record it again with --snapshot-update"
        )
    match = re.match(re.escape(FIRST_LINE) + r" (\d+)\n", text)
    if match is None:
        raise SnapshotFileError("is not a pytest-evaltasks snapshot (its first line is missing)")
    sections: dict[str, dict[str, str]] = {"task": {}, "settings": {}, "layout": {}}
    hashes_at = text.find("\n[doc hashes]")
    head = text if hashes_at == -1 else text[: hashes_at + 1]
    current: str | None = None
    for line in head.split("\n"):
        if line.startswith("["):
            current = _section_name(line)
            continue
        if current is None or not line:
            continue
        key, sep, value = line.partition(": ")
        if sep:
            sections[current][key] = value
        elif line.endswith(":"):
            sections[current][line[:-1]] = ""
    hash_text = ""
    if hashes_at != -1:
        start = text.find("\n", hashes_at + 1) + 1
        end = text.find("\n\n", start - 1)
        hash_text = text[start : end + 1] if end != -1 else text[start:]
    if int(match.group(1)) == FORMAT_VERSION and "version" not in sections["task"]:
        raise SnapshotFileError("has no [task] section with a version: it is truncated or edited")
    return SnapshotFacts(
        format_version=int(match.group(1)),
        task=sections["task"],
        settings=sections["settings"],
        layout=sections["layout"],
        hashes=hash_text,
    )


def shown_blocks(text: str) -> dict[str, list[str]]:
    """The docs shown in full in a snapshot text, by label, as lines."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in normalise(text).split("\n"):
        if line.startswith("[doc ") and "] id=" in line:
            current = blocks.setdefault(line.partition("] id=")[2], [])
        if current is not None:
            current.append(line)
            if line == "--- end ---":
                current = None
    return blocks


def _section_name(line: str) -> str | None:
    """Which `key: value` section a `[...]` line opens."""
    if line in ("[task]", "[settings]", "[layout]"):
        return line[1:-1]
    return None


def label_key(label: str) -> tuple[str, int, str]:
    """Sort `12` before `100`, and `split/3` labels by split then number."""
    split, _, ident = label.rpartition("/")
    return (split, int(ident), "") if ident.isdigit() else (split, -1, ident)


def _json(value: Any) -> str:
    """Compact, unambiguous, non-ASCII kept readable."""
    return json.dumps(value, ensure_ascii=False, default=_name_of)


def _name_of(value: Any) -> Any:
    """JSON fallback: the canonical plain value, else a callable's qualified name (a repr would
    hold a memory address)."""
    try:
        return plain_value(value)
    except TypeError:
        return str(getattr(value, "__qualname__", None) or type(value).__name__)
