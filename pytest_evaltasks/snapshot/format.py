"""The per-task snapshot file: what a reviewer reads, and what the version gate compares.

Pure functions, no pytest: `build_snapshot` renders every doc of a task and returns its
text; `parse_snapshot` reads the recorded fields back. The file is plain UTF-8:

    header sections   task coordinates and settings, one `key: value` per line
    [doc hashes]      one short hash per doc, sorted by doc label, so a diff names the docs
    [doc N]           the first few docs in full: prompt exactly as sent, choices, golds
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..engine.rendering import plain_prompt_head, plain_prompt_query, render_messages, render_plain

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.doc import Doc
    from ..engine.task import Task

FORMAT_VERSION = 1
"""Bump when anything that goes into the file or a hash changes; never a prompt change."""

MESSAGES = "messages"
"""`--evaltasks-chat-template messages`: record the chat-API message list, not a template."""

CONTENT_KEYS = (
    "dataset",
    "data_files",
    "evaluation_splits",
    "few_shots_split",
    "few_shots_select",
    "num_fewshots",
    "generation_size",
    "stop_sequences",
    "num_samples",
    "metrics",
    "metric_params",
)
"""Task header fields whose change is a content change (the version gate watches them)."""


@dataclass(frozen=True)
class RunSettings:
    """Run options that shape a snapshot; recorded in it, so a mismatch is named as such."""

    system_prompt: str | None = None
    chat_template: str | None = None
    docs_shown: int = 3
    max_samples: int | None = None
    chat_template_digest: str | None = None

    def recorded(self) -> dict[str, str]:
        """The settings as the file records them.

        A chat template is recorded with a digest of its source, so an edited template file is
        reported as a settings change, never as an unversioned prompt change of the task.
        """
        template = _json(self.chat_template)
        if self.chat_template_digest is not None:
            template += f" (sha256:{self.chat_template_digest[:16]})"
        return {
            "system_prompt": _json(self.system_prompt),
            "chat_template": template,
            "docs_shown": str(self.docs_shown),
            "max_samples": "all" if self.max_samples is None else str(self.max_samples),
        }


@dataclass
class SnapshotFacts:
    """What the gate and the summary need, without re-reading the text."""

    format_version: int
    task: dict[str, str]
    settings: dict[str, str]
    doc_hashes: dict[str, str]
    num_docs: int = 0

    @property
    def version(self) -> str:
        """The task version as recorded."""
        return self.task.get("version", "")

    def content(self) -> dict[str, str]:
        """The task fields the version gate treats as content."""
        return {key: self.task.get(key, "") for key in CONTENT_KEYS}


@dataclass
class BuiltSnapshot:
    """The snapshot text of one task run and the facts it records."""

    text: str
    facts: SnapshotFacts
    warnings: list[str] = field(default_factory=list)


def build_snapshot(
    task: Task,
    settings: RunSettings,
    template: ChatTemplate | None = None,
) -> BuiltSnapshot:
    """Render every doc of `task` and lay out its snapshot file."""
    from ..engine.chat_template import apply_chat_template

    labelled = task.labelled_docs(settings.max_samples)
    system_prompt = settings.system_prompt
    heads = PromptHeads(system_prompt)
    hashes: dict[str, str] = {}
    shown: list[str] = []
    shortfall = 0
    for position, (label, doc) in enumerate(labelled):
        chat: str | list[dict[str, str]] | None = None
        if settings.chat_template == MESSAGES:
            chat = render_messages(doc, system_prompt)
        elif template is not None:
            chat = apply_chat_template(template, render_messages(doc, system_prompt))
        hashes[label] = doc_hash(heads.digest(doc), chat, doc)
        if len(doc.fewshot_samples) < task.num_fewshots:
            shortfall += 1
        if position < settings.docs_shown:
            plain = render_plain(doc, system_prompt)
            shown.append(_doc_block(position, len(labelled), label, doc, plain, chat, settings))
    task_fields = task_header(task, len(labelled), shortfall)
    facts = SnapshotFacts(
        format_version=FORMAT_VERSION,
        task=task_fields,
        settings=settings.recorded(),
        doc_hashes=dict(sorted(hashes.items(), key=lambda item: _label_key(item[0]))),
        num_docs=len(labelled),
    )
    text = _layout(facts, shown)
    warnings = [task_fields["few_shots_warning"]] if "few_shots_warning" in task_fields else []
    return BuiltSnapshot(text=text, facts=facts, warnings=warnings)


class PromptHeads:
    """Hashes of plain prompts, sharing the work for docs with the same instruction and examples.

    A plain prompt is `head + query` (see `rendering.plain_prompt_head`); docs drawing the same
    examples share the head, so it is rendered and hashed once and its hash state copied. The
    digest equals that of the whole prompt string: only the work is shared, not the meaning.
    """

    def __init__(self, system_prompt: str | None) -> None:
        self.system_prompt = system_prompt
        self._heads: dict[tuple[Any, ...], Any] = {}

    def digest(self, doc: Doc) -> Any:
        """A blake2b state that has consumed this doc's whole plain prompt."""
        # Example docs are the sampler's cached pool, alive for the whole build: ids are stable.
        key = (doc.instruction, *map(id, doc.fewshot_samples))
        head = self._heads.get(key)
        if head is None:
            text = plain_prompt_head(doc, self.system_prompt)
            head = self._heads[key] = hashlib.blake2b(text.encode("utf-8"), digest_size=8)
        state = head.copy()
        state.update(plain_prompt_query(doc).encode("utf-8"))
        return state


def doc_hash(plain: Any, chat: str | list[dict[str, str]] | None, doc: Doc) -> str:
    """A short hash of everything a model is sent and scored against for one doc.

    `plain` is a blake2b state that has consumed the plain prompt (see `PromptHeads`).
    """
    if isinstance(chat, str):
        plain.update(b"\x1echat\x1e" + chat.encode("utf-8"))
    elif chat is not None:
        for message in chat:
            plain.update(f"\x1e{message['role']}\x1e{message['content']}".encode())
    plain.update(f"\x1eanswers\x1e{doc.choices!r}\x1e{doc.gold_index!r}".encode())
    return str(plain.hexdigest())


def fingerprint(doc_hashes: dict[str, str]) -> str:
    """One hash over every doc's hash: equal fingerprints mean equal prompts for all docs."""
    lines = "".join(f"{label} {digest}\n" for label, digest in doc_hashes.items())
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def task_header(task: Task, rendered: int, shortfall: int) -> dict[str, str]:
    """The task's own fields, as recorded in the `[task]` section."""
    config = task.config
    header: dict[str, str] = {
        "name": task.display_name,
        "version": _json(config.version),
        "dataset": f"{config.hf_repo} / {config.hf_subset or 'default'}"
        f" @ {config.hf_revision or 'default revision'}",
        "data_files": _json(config.hf_data_files),
        "evaluation_splits": ", ".join(config.evaluation_splits),
        "few_shots_split": task.fewshot_split or ", ".join(config.evaluation_splits),
    }
    if task.fewshot_from_eval:
        header["few_shots_warning"] = (
            "WARNING: no few-shot split, so examples come from the evaluation split itself"
            + (" (unused at 0 shots)" if task.num_fewshots == 0 else "")
        )
    header.update(
        {
            "few_shots_select": config.few_shots_select or "balanced",
            "num_fewshots": str(task.num_fewshots),
            "generation_size": _json(config.generation_size),
            "stop_sequences": _json(list(config.stop_sequence or [])),
            "num_samples": _json(config.num_samples),
            "metrics": ", ".join(config.metric_names) or "-",
            "metric_params": _json(task.metric_params) if task.metric_params else "-",
            "docs": _docs_line(task, rendered),
            "fewshot_pool": _pool_line(task, shortfall),
        }
    )
    return header


def _docs_line(task: Task, rendered: int) -> str:
    """How many docs the task has and how many this run rendered."""
    total = len(task.eval_docs())
    return f"{total}" if rendered == total else f"{total} ({rendered} rendered: max_samples)"


def _pool_line(task: Task, shortfall: int) -> str:
    """Pool size, or why there is none; names docs that got fewer examples than asked."""
    if task.num_fewshots == 0:
        return "not loaded (0-shot)"
    line = f"{len(task.fewshot_docs())} docs"
    if shortfall:
        line += f"; {shortfall} docs got fewer than {task.num_fewshots} examples"
    return line


def _doc_block(
    position: int,
    total: int,
    label: str,
    doc: Doc,
    plain: str,
    chat: str | list[dict[str, str]] | None,
    settings: RunSettings,
) -> str:
    """One fully shown doc: ids, the prompt exactly as sent, choices and golds."""
    lines = [
        f"[doc {position + 1} of {total}] id={label}",
        f"fewshot_ids: {', '.join(example.id for example in doc.fewshot_samples) or '-'}",
        f"choices: {_json(doc.choices)}",
        f"gold_index: {_json(doc.gold_index)}",
        f"golds: {_json(_safe_golds(doc))}",
        "--- prompt (plain text) ---",
        *_quoted(plain),
    ]
    if isinstance(chat, list):
        lines.append("--- prompt (chat messages) ---")
        for message in chat:
            lines.append(f"<{message['role']}>")
            lines.extend(_quoted(message["content"]))
    elif chat is not None:
        lines.append(f"--- prompt (chat template {settings.chat_template}) ---")
        lines.extend(_quoted(chat))
    lines.append("--- end ---")
    return "\n".join(lines)


def _safe_golds(doc: Doc) -> list[Any] | str:
    """Golds for display; a broken gold index is shown, not raised, here."""
    try:
        return doc.get_golds()
    except (IndexError, TypeError) as exc:
        return f"<invalid gold_index: {exc}>"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _quoted(text: str) -> list[str]:
    """Each line behind `| `, so leading/trailing blank lines and indentation stay visible."""
    visible = _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)
    return ["|" + (" " + line if line else "") for line in visible.split("\n")]


def _layout(facts: SnapshotFacts, shown: Sequence[str]) -> str:
    """The whole file."""
    parts = [
        f"# pytest-evaltasks snapshot, format {facts.format_version}",
        "# Generated by `pytest --evaltasks ... --snapshot-update`. Review the diff like code.",
        "",
        "[task]",
        *(f"{key}: {value}" for key, value in facts.task.items()),
        "",
        "[settings]",
        *(f"{key}: {value}" for key, value in facts.settings.items()),
        "",
        "[fingerprint]",
        f"prompts: sha256:{fingerprint(facts.doc_hashes)}",
        "",
        f"[doc hashes] {len(facts.doc_hashes)} docs, by id",
        *(f"{label} {digest}" for label, digest in facts.doc_hashes.items()),
    ]
    for block in shown:
        parts += ["", block]
    return "\n".join(parts) + "\n"


def parse_snapshot(text: str) -> SnapshotFacts:
    """Read back the header, settings and doc hashes; tolerant of unknown lines."""
    match = re.match(r"# pytest-evaltasks snapshot, format (\d+)", text)
    if match is None:
        raise ValueError("not a pytest-evaltasks snapshot (missing its first line)")
    sections: dict[str, dict[str, str]] = {"task": {}, "settings": {}, "hashes": {}}
    current: str | None = None
    for line in text.split("\n"):
        if line.startswith("["):
            current = _section_name(line)
            continue
        if current is None or not line:
            continue
        if current == "hashes":
            label, _, digest = line.rpartition(" ")
            sections["hashes"][label] = digest
        else:
            key, sep, value = line.partition(": ")
            if sep:
                sections[current][key] = value
    return SnapshotFacts(
        format_version=int(match.group(1)),
        task=sections["task"],
        settings=sections["settings"],
        doc_hashes=sections["hashes"],
        num_docs=len(sections["hashes"]),
    )


def _section_name(line: str) -> str | None:
    """Which parsed section a `[...]` line opens; doc blocks end the parsed part."""
    if line == "[task]":
        return "task"
    if line == "[settings]":
        return "settings"
    if line.startswith("[doc hashes]"):
        return "hashes"
    return None


def _label_key(label: str) -> tuple[str, int, str]:
    """Sort `12` before `100`, and `split/3` labels by split then number."""
    split, _, ident = label.rpartition("/")
    return (split, int(ident), "") if ident.isdigit() else (split, -1, ident)


def _json(value: Any) -> str:
    """Compact, unambiguous, non-ASCII kept readable."""
    return json.dumps(value, ensure_ascii=False, default=_name_of)


def _name_of(value: Any) -> str:
    """JSON fallback: callables by qualified name (a repr would hold a memory address)."""
    return str(getattr(value, "__qualname__", None) or type(value).__name__)
