"""Our `Doc`s as the lint rules read them (`rendered.LintDoc`, `rendered.LintTask`).

The rules themselves (`lint.rules`) read every source's docs in that one neutral form; this is
how a lighteval-style doc fills it, after lighteval's own pipeline: a doc whose metrics
score log-probabilities is scored by appending each choice to its prompt, a doc whose metrics
generate is judged by its golds, its stop sequences and its generation size.

It runs on every doc of every run (lint is on by default), so what depends only on a doc's
sampling methods is worked out once per distinct list of them, and whether a doc's few-shot
examples repeat once per distinct list of examples.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .doc import SamplingMethod
from .lint_input import LintDoc, LintTask
from .prompts import plain_prompt_query

if TYPE_CHECKING:
    from .doc import Doc
    from .task import TaskResult


def lint_task(result: TaskResult) -> LintTask:
    """The task's few-shot pool: drawn from an evaluated split, or too small."""
    shots = result.request.num_fewshots
    pool = result.pool_size
    short = None
    if pool is not None and (pool < shots or result.shortfall):
        short = f"{pool} docs for {shots} shots; {result.shortfall} docs got fewer"
    return LintTask(pool_is_eval=result.pool_in_eval and pool is not None, pool_short=short)


def lint_docs(docs: Iterable[tuple[str, Doc]]) -> Iterator[LintDoc]:
    """Each labelled doc in the rules' form."""
    kinds: dict[tuple[Any, ...], tuple[bool, bool]] = {}
    shots: dict[tuple[int, ...], bool] = {}
    # A task's docs usually share one sampling-methods list and one examples list: the
    # previous doc's answers are kept while the very same list comes back.
    methods: Any = None
    kind = (False, False)
    examples: Any = None
    repeated = False
    for label, doc in docs:
        if doc.sampling_methods is not methods or not methods:
            methods = doc.sampling_methods
            key = tuple(methods)
            cached = kinds.get(key)
            if cached is None or not key:
                cached = kinds[key] = _kind(doc)
            kind = cached
        samples = doc.fewshot_samples
        if len(samples) < 2:
            repeats = False
        else:
            if samples is not examples:
                examples = samples
                ids = tuple(map(id, samples))
                if ids not in shots:
                    shots[ids] = _repeats(samples)
                repeated = shots[ids]
            repeats = repeated
        scored, generative = kind
        plain = _plain_choices(doc)  # the common case, worked out once for every rule
        keys = tuple(plain) if plain is not None else _choice_keys(doc)
        choices = plain if plain is not None else _choice_texts(doc)
        end = _prompt_end(doc)
        query = doc.query
        golds: list[str] = []
        stops: list[str] = []
        if generative:
            golds = _golds(doc)
            stops = [stop for stop in doc.stop_sequences or [] if stop]
        yield LintDoc(  # positionally: one per doc of every run, a third of the keyword cost
            label,
            end,
            ((end, choices),) if scored else (),
            not query or query.isspace(),  # no copy, as strip() makes
            choices if scored else (),
            keys,
            len(keys) if scored else 0,
            (query, keys),
            golds,
            stops,
            doc.generation_size if generative else None,
            repeats,
        )


def _kind(doc: Doc) -> tuple[bool, bool]:
    """(scored by appending each choice, answered by generation), from the sampling methods;
    without any (metrics of unknown kind), docs with several choices count as scored."""
    methods = {str(getattr(method, "value", method)) for method in doc.sampling_methods}
    if not methods:
        count = len(_choice_keys(doc))
        return count > 1, count <= 1
    return SamplingMethod.LOGPROBS.value in methods, SamplingMethod.GENERATIVE.value in methods


def _repeats(examples: list[Doc]) -> bool:
    """Two of these few-shot examples are the same question."""
    keys = {(e.query, _choice_keys(e), repr(e.gold_index)) for e in examples}
    return len(keys) < len(examples)


def _plain_choices(doc: Doc) -> list[str] | None:
    """The choices when they are the usual list of strings (the common case, checked in a few
    type checks), else None."""
    choices: Any = doc.choices
    if type(choices) is list and all(type(choice) is str for choice in choices):
        return choices
    return None


def _choice_texts(doc: Doc) -> list[str]:
    """The texts of a doc's choices: a choice that is a list of aliases gives each alias, a
    string of choices each character (as lighteval indexes it), no choices none."""
    choices = doc.choices
    if choices is None:
        return []
    if isinstance(choices, str):
        return list(choices)
    return [
        alias for choice in choices for alias in (choice if isinstance(choice, list) else [choice])
    ]


def _choice_keys(doc: Doc) -> tuple[Any, ...]:
    """A doc's choices as one hashable value per choice."""
    plain = _plain_choices(doc)
    if plain is not None:
        return tuple(plain)
    choices = doc.choices
    if choices is None:
        return ()
    if isinstance(choices, str):
        return tuple(choices)
    return tuple(tuple(choice) if isinstance(choice, list) else choice for choice in choices)


def _prompt_end(doc: Doc) -> str:
    """The plain prompt's last character, without rendering it (the query ends it)."""
    query = plain_prompt_query(doc)
    if query:
        return query[-1]
    return "\n" if doc.instruction is not None or doc.fewshot_samples else ""


def _golds(doc: Doc) -> list[str]:
    try:
        return [str(gold) for gold in doc.get_golds()]
    except (IndexError, TypeError):
        return []
