"""Turn a doc with its few-shot examples into what a model is sent: plain text or chat messages.

Both follow lighteval's prompt manager character for character (docs/differences-from-lighteval.md,
prompt step 6).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .doc import Doc

if TYPE_CHECKING:
    from .chat_template import ChatTemplate

Message = dict[str, str]

_SHOT_MEMO_LIMIT = 4096
_shot_memo: dict[tuple[str, str | None, str], str] = {}
"""Rendered few-shot blocks by what they are made of: (query, instruction, gold choice)."""


def extract_query(query: str, instruction: str | None) -> str:
    """Drop a leading instruction from the query so it is not sent twice."""
    if instruction is not None and query.startswith(instruction):
        return query[len(instruction) :].strip()
    return query


def render_plain(doc: Doc, system_prompt: str | None = None) -> str:
    """The prompt as sent to a base model: blocks joined by a blank line."""
    return plain_prompt_head(doc, system_prompt) + plain_prompt_query(doc)


def plain_prompt_head(doc: Doc, system_prompt: str | None = None) -> str:
    """Everything before the doc's own query: system prompt, instruction and examples, each
    followed by the blank line that joins blocks ("" when there are none).

    Docs with the same instruction and examples share it, which lets callers that handle
    thousands of docs (the snapshot fingerprint) build and hash it once.
    """
    parts: list[str] = []
    if system_prompt is not None:
        parts.append(system_prompt)
    if doc.instruction is not None:
        parts.append(doc.instruction)
    parts.extend(map(_shot_text, doc.fewshot_samples))
    return "".join(part + "\n\n" for part in parts)


def plain_prompt_query(doc: Doc) -> str:
    """The doc's own query, without a leading copy of its instruction: the prompt's last block."""
    return extract_query(doc.query, doc.instruction)


def _shot_text(example: Doc) -> str:
    """One few-shot block, `question answer`, memoised: the same examples recur in every prompt.

    For an int `gold_index` into a list of str choices, the text is made of the query, the
    instruction and that choice alone, so those three are the memo's key (strings hash once);
    any other doc is rendered each time."""
    query, instruction, gold = example.query, example.instruction, example.gold_index
    choices: Any = example.choices
    simple = (
        type(gold) is int
        and type(choices) is list
        and -len(choices) <= gold < len(choices)
        and type(choices[gold]) is str
    )
    key = (query, instruction, choices[gold]) if simple else None
    if key is not None:
        known = _shot_memo.get(key)
        if known is not None:
            return known
    text = extract_query(query, instruction) + " " + example.get_golds()[0].strip()
    if key is not None:
        if len(_shot_memo) >= _SHOT_MEMO_LIMIT:
            _shot_memo.clear()
        _shot_memo[key] = text
    return text


def render_messages(doc: Doc, system_prompt: str | None = None) -> list[Message]:
    """The prompt as sent to a chat API; the instruction appears exactly once."""
    messages: list[Message] = []
    if system_prompt is not None:
        messages.append({"role": "system", "content": system_prompt})
    instruction_used = False
    for position, example in enumerate(doc.fewshot_samples):
        query = extract_query(example.query, example.instruction)
        if position == 0 and doc.instruction is not None:
            query = doc.instruction + query
            instruction_used = True
        messages.append({"role": "user", "content": query})
        messages.append({"role": "assistant", "content": example.get_golds()[0]})
    query = extract_query(doc.query, doc.instruction)
    if doc.instruction is not None and not instruction_used:
        query = doc.instruction + query
    messages.append({"role": "user", "content": query})
    return messages


def render_chat(
    doc: Doc, template: str | os.PathLike[str] | ChatTemplate, system_prompt: str | None = None
) -> str:
    """The prompt as a local chat model sees it: the messages through a chat template.

    `template` is a bundled template name, a `.jinja` file, or a `tokenizer_config.json`.
    The chat template module (and jinja2) is imported here, on first use: plain rendering
    and importing the package do not pay for it.
    """
    from .chat_template import apply_chat_template, load_chat_template

    return apply_chat_template(load_chat_template(template), render_messages(doc, system_prompt))
