"""`Doc`: one evaluation question, the unit every later step of the pipeline works on."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class SamplingMethod(StrEnum):
    """How a model is queried for a doc; lighteval task files import it next to `Doc`."""

    GENERATIVE = "GENERATIVE"
    LOGPROBS = "LOGPROBS"
    PERPLEXITY = "PERPLEXITY"


@dataclass(slots=True)
class Doc:
    """One question as a prompt function built it, plus what the runtime sets on it.

    A plain slotted dataclass, not a pydantic model: one is created for every row of every
    task, so construction must stay cheap. Field names and order follow lighteval's `Doc`,
    so prompt functions port unchanged.
    """

    query: str
    choices: list[str] | list[str | list[str]] | str | None
    """Usually a list of str. lighteval also renders a choice that is a list of aliases
    (triviaqa), a string whose characters are the choices (mmlu_pro), and `None` for tasks
    scored without choices (perplexity, open generation)."""
    gold_index: int | list[int] | None
    instruction: str | None = None
    images: list[Any] | None = None
    specific: dict[str, Any] | None = None
    unconditioned_query: str | None = None
    original_query: str | None = None

    id: str = ""
    task_name: str = ""

    fewshot_samples: list[Doc] = field(default_factory=list)
    sampling_methods: list[Any] = field(default_factory=list)
    fewshot_sorting_class: str | None = None

    generation_size: int | None = None
    stop_sequences: list[str] | None = None
    use_logits: bool = False
    num_samples: int = 1
    generation_grammar: Any = None

    def get_golds(self) -> list[str]:
        """The gold answers as strings, as lighteval gives them: a choice that is itself a list
        contributes each item, a string of choices its character. A doc without choices has no
        golds: `TypeError`, as in lighteval."""
        indices = self.gold_index if isinstance(self.gold_index, list) else [self.gold_index]
        golds: list[str] = []
        choices: Any = self.choices
        for index in indices:
            choice: Any = choices[index]
            if isinstance(choice, list):
                golds.extend(choice)
            else:
                golds.append(choice)
        return golds


def golds_or_none(doc: Doc) -> list[str] | None:
    """The doc's golds, or None when it has none to give (no choices, no gold index)."""
    try:
        return doc.get_golds()
    except (IndexError, TypeError):
        return None


_ONLY_STR = frozenset({str})


def check_doc(doc: Doc) -> str | None:
    """What is wrong with a doc a prompt function made, or None when it is well formed.

    Checked where the doc is made, so the error can name the row: later steps index `choices`
    with `gold_index` and join strings, and would fail far away, or record nonsense. A tuple of
    choices becomes a list and a numpy integer gold becomes an `int` (in place): both mean the
    same question, and the fingerprint must not tell them apart. A negative gold is a valid
    Python index, as lighteval uses it (unlabelled splits carry -1).
    """
    choices, gold = doc.choices, doc.gold_index
    if (
        type(doc.query) is str
        and type(choices) is list
        and type(gold) is int
        and -len(choices) <= gold < len(choices)
        and (doc.instruction is None or type(doc.instruction) is str)
        and {*map(type, choices)} <= _ONLY_STR
    ):
        return None  # the common case, decided in a few type checks
    return _describe_problem(doc)


def _describe_problem(doc: Doc) -> str | None:
    """The slow path of `check_doc`: normalise what is acceptable, describe the rest.

    Accepted is what lighteval's pipeline renders: choices as a list of str or of lists of
    aliases, a string of choices, or `None` (then any gold index, `None` included: nothing
    indexes them).
    """
    if not isinstance(doc.query, str):
        return f"field 'query' is {_kind(doc.query)}, not a str"
    if doc.instruction is not None and not isinstance(doc.instruction, str):
        return f"field 'instruction' is {_kind(doc.instruction)}, not a str or None"
    if isinstance(doc.choices, tuple):
        doc.choices = list(doc.choices)
    choices = doc.choices
    if choices is None:
        if doc.gold_index is None:
            return None
        gold = _as_index(doc.gold_index)
        if isinstance(gold, str):
            return gold
        doc.gold_index = gold
        return None
    if isinstance(choices, list):
        for position, choice in enumerate(choices):
            if isinstance(choice, tuple):
                choice = choices[position] = list(choice)
            if isinstance(choice, list):
                if not all(isinstance(alias, str) for alias in choice):
                    return f"field 'choices' item {position} is {_kind(choice)}, not a list of str"
            elif not isinstance(choice, str):
                return (
                    f"field 'choices' item {position} is {_kind(choice)}, not a str (or a list "
                    f"of str aliases)"
                )
    elif not isinstance(choices, str):
        return f"field 'choices' is {_kind(choices)}, not a list of str, a str or None"
    gold = _as_index(doc.gold_index)
    if isinstance(gold, str):
        return gold
    doc.gold_index = gold
    for index in gold if isinstance(gold, list) else [gold]:
        if not -len(choices) <= index < len(choices):
            return (
                f"field 'gold_index' {index} is out of range for {len(choices)} choice(s) "
                f"{_short(choices)}"
            )
    return None


def _as_index(value: object) -> int | list[int] | str:
    """`gold_index` as an int or list of ints (numpy integers accepted), or the problem."""
    if isinstance(value, (list, tuple)):
        indices = [_as_index(item) for item in value]
        for item in indices:
            if not isinstance(item, int):
                return f"field 'gold_index' holds {_kind(value)} items that are not all ints"
        if not indices:
            return "field 'gold_index' is an empty list"
        return indices  # type: ignore[return-value]
    if isinstance(value, bool):
        return "field 'gold_index' is a bool, not an int"
    if isinstance(value, int):
        return int(value)
    if hasattr(value, "__index__") and hasattr(value, "dtype"):  # a numpy integer scalar
        return int(value.__index__())
    return f"field 'gold_index' is {_kind(value)}, not an int or a list of ints"


def _kind(value: object) -> str:
    """`None`, or the value's type and a short repr, for messages."""
    if value is None:
        return "None"
    return f"{type(value).__name__} {_short(value)}"


def _short(value: object, limit: int = 60) -> str:
    """A repr cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def doc_like(value: Any) -> Doc | None:
    """Our `Doc` with the same field values as a doc of another class (lighteval's own `Doc`), or
    None if it is not one.

    A doc is recognised by having every `Doc` field; its containers are used as they are.
    """
    if not all(hasattr(value, name) for name in Doc.__slots__):
        return None
    doc = Doc(*(getattr(value, name) for name in Doc.__slots__))
    doc.fewshot_samples = list(doc.fewshot_samples or [])
    doc.sampling_methods = list(doc.sampling_methods or [])
    return doc


def live_key(value: object) -> int:
    """A key unique to a live object, as `id(value)` is, without the audit event every `id()`
    call raises: once an audit hook is installed (the input observer is one), each event is a
    Python call, and the engine keys thousands of docs a task this way. (`object.__hash__` is
    the object's address, rotated: one-to-one while the object lives.)"""
    return object.__hash__(value)
