"""Turn a doc with its few-shot examples into what a model is sent: plain text or chat messages.

Both follow lighteval's prompt manager character for character (SPEC 3.5).
"""

from __future__ import annotations

import os

from .chat_template import ChatTemplate, apply_chat_template, load_chat_template
from .doc import Doc

Message = dict[str, str]


def extract_query(query: str, instruction: str | None) -> str:
    """Drop a leading instruction from the query so it is not sent twice."""
    if instruction is not None and query.startswith(instruction):
        return query[len(instruction) :].strip()
    return query


def render_plain(doc: Doc, system_prompt: str | None = None) -> str:
    """The prompt as sent to a base model: blocks joined by a blank line."""
    parts: list[str] = []
    if system_prompt is not None:
        parts.append(system_prompt)
    if doc.instruction is not None:
        parts.append(doc.instruction)
    for example in doc.fewshot_samples:
        answer = example.get_golds()[0].strip()
        parts.append(extract_query(example.query, example.instruction) + " " + answer)
    parts.append(extract_query(doc.query, doc.instruction))
    return "\n\n".join(parts)


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
    """
    return apply_chat_template(load_chat_template(template), render_messages(doc, system_prompt))
