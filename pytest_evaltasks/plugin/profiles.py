"""Rendering profiles: one run checks each task as plain text and through chat templates.

Authors evaluate base models (plain text) and instruct models (a chat template) from the same
tasks. `evaltasks_renderings = plain chatml chatml+system` (or `--evaltasks-renderings`) checks
every task under each rendering, each as its own item and snapshot file:

    mmlu:anatomy|5            plain text (the file every task has)
    mmlu:anatomy|5 [chatml]   through the bundled chatml template
    mmlu:anatomy|5 [chatml+system]   the same, with the run's system prompt first

A rendering is `plain`, `messages` (the chat-API message list), a bundled template name, a
`.jinja` file or a `tokenizer_config.json` (a path, relative to the root directory), each
optionally with `+system`. A task module narrows its tasks' renderings with a mapping of task
name patterns to renderings:

    evaltasks_renderings = {"mmlu:*": ["plain"], "*": ["plain", "chatml"]}

Without the option, a run has one rendering, set by `--evaltasks-chat-template` and
`--evaltasks-system-prompt` as before, recorded in the plain file.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine.run_settings import RunSettings
from ..errors import EvalTaskError

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate

PLAIN = "plain"
MESSAGES = "messages"
SYSTEM = "+system"
MODULE_VARIABLE = "evaltasks_renderings"
"""The task module mapping that narrows renderings per task name pattern."""

_SUFFIX = re.compile(r"^(?P<label>.*) \[(?P<key>[^\[\]]+)\]$")


class RenderingError(EvalTaskError):
    """A rendering that cannot be used (unknown template, `+system` without a system prompt)."""


@dataclass(frozen=True)
class Rendering:
    """One way a run renders every task: its settings and its loaded template."""

    key: str
    """`plain` (the task's own file), or the name shown in brackets after the item name."""
    run: RunSettings
    template: ChatTemplate | None
    source: str | None
    """The template as loaded (a bundled name or an absolute path), for a fresh process."""

    def item_name(self, label: str) -> str:
        """`label`, or `label [key]` for any rendering but plain."""
        return item_name(label, self.key)


def item_name(label: str, key: str) -> str:
    """The item (and snapshot) name of a task label under a rendering."""
    return label if key == PLAIN else f"{label} [{key}]"


def split_item_name(name: str) -> tuple[str, str]:
    """`(label, rendering key)` of an item name (`plain` when it has no suffix)."""
    match = _SUFFIX.match(name)
    if match is None:
        return name, PLAIN
    return match.group("label"), match.group("key")


def parse_keys(text: str) -> list[str]:
    """Rendering keys from an option or ini value: separated by spaces or commas, in order,
    each once."""
    keys = [part for part in re.split(r"[\s,]+", text.strip()) if part]
    return list(dict.fromkeys(keys))


def resolve(
    keys: list[str],
    base: RunSettings,
    root: Path,
    cwd: Path,
    tokens: tuple[str | None, str | None] = (None, None),
) -> list[Rendering]:
    """Load every rendering once; an unknown template or a `+system` rendering without a system
    prompt is a `RenderingError` that names it."""
    return [_resolve(key, base, root, cwd, tokens) for key in keys]


def base_rendering(
    base: RunSettings, root: Path, cwd: Path, tokens: tuple[str | None, str | None] = (None, None)
) -> Rendering:
    """The one rendering of a run without profiles: as `--evaltasks-chat-template` and
    `--evaltasks-system-prompt` say, recorded in the plain file."""
    name = base.chat_template
    if name is None or name == MESSAGES:
        return Rendering(PLAIN, base, None, None)
    template, recorded, source, digest = load(name, root, cwd, tokens)
    run = replace(base, chat_template=recorded, chat_template_digest=digest)
    return Rendering(PLAIN, run, template, source)


def _resolve(
    key: str, base: RunSettings, root: Path, cwd: Path, tokens: tuple[str | None, str | None]
) -> Rendering:
    name, system = (key[: -len(SYSTEM)], True) if key.endswith(SYSTEM) else (key, False)
    if system and base.system_prompt is None:
        raise RenderingError(
            f"rendering {key!r} needs a system prompt: set evaltasks_system_prompt (or "
            f"--evaltasks-system-prompt)"
        )
    run = replace(base, system_prompt=base.system_prompt if system else None, chat_template=None)
    if name == PLAIN:
        return Rendering(key, run, None, None)
    if name == MESSAGES:
        return Rendering(key, replace(run, chat_template=MESSAGES), None, None)
    template, recorded, source, digest = load(name, root, cwd, tokens)
    run = replace(run, chat_template=recorded, chat_template_digest=digest)
    return Rendering(key, run, template, source)


def load(
    name: str, root: Path, cwd: Path, tokens: tuple[str | None, str | None]
) -> tuple[ChatTemplate, str, str, str]:
    """A template by bundled name or path: the template, its name as recorded (a path relative
    to the root), its source for a fresh process, and a digest of what renders it.

    A `.jinja` file takes its `bos_token`/`eos_token` from a `tokenizer_config.json` beside
    it, and `tokens` (the `evaltasks_bos_token`/`evaltasks_eos_token` settings) override both.
    """
    from ..engine.chat_template import TOKENIZER_CONFIG, load_chat_template, token_text

    candidates = [cwd / name, root / name]
    path = next((candidate for candidate in candidates if candidate.exists()), None)
    template = load_chat_template(str(path) if path is not None else name)
    if path is not None:
        looked = [str(c.absolute()) for c in candidates if not c.is_dir()]
        template = replace(template, files=tuple(dict.fromkeys([*template.files, *looked])))
    if path is not None and path.suffix == ".jinja":
        config = path.with_name(TOKENIZER_CONFIG)
        template = replace(template, files=(*template.files, str(config.absolute())))
        if config.is_file():
            import json

            data = json.loads(config.read_text(encoding="utf-8"))
            template = replace(
                template,
                bos_token=token_text(name, data, "bos_token"),
                eos_token=token_text(name, data, "eos_token"),
            )
    bos, eos = tokens
    if bos is not None or eos is not None:
        template = replace(
            template,
            bos_token=template.bos_token if bos is None else bos,
            eos_token=template.eos_token if eos is None else eos,
        )
    digest = hashlib.sha256(
        f"{template.source}\x00{template.bos_token}\x00{template.eos_token}".encode()
    ).hexdigest()
    if path is None:
        return template, name, name, digest
    resolved = path.resolve()
    try:
        recorded = resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        recorded = resolved.name
    return template, recorded, str(resolved), digest


def allowed(module: Any, task_name: str, keys: list[str]) -> list[str]:
    """The renderings a task module allows a task, in the run's order: its mapping's first
    pattern that matches the task name decides; no mapping (or no match) allows all."""
    mapping = getattr(module, MODULE_VARIABLE, None)
    if not isinstance(mapping, Mapping):
        return keys
    for pattern, wanted in mapping.items():
        if isinstance(pattern, str) and fnmatch.fnmatchcase(task_name, pattern):
            chosen = {wanted} if isinstance(wanted, str) else set(wanted)
            return [key for key in keys if key in chosen]
    return keys
