"""Lint rules over a task's finished docs: mistakes that change scores and that no snapshot
comparison can see, because the prompts were recorded that way.

Each rule has a name; a finding names the rule, a few of the doc ids it concerns and their
count. A task module silences rules for its tasks with a module-level mapping:

    evaltasks_lint_ignore = {"truthfulqa:mc": ["choice-count-varies"], "*": ["trailing-space"]}
"""

from __future__ import annotations

import fnmatch
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine.doc import SamplingMethod
from ..engine.rendering import plain_prompt_query

if TYPE_CHECKING:
    from ..engine.doc import Doc
    from ..engine.task import TaskResult

IDS_SHOWN = 5
IGNORE_VARIABLE = "evaltasks_lint_ignore"

RULES: dict[str, str] = {
    "pool-is-eval-split": "the few-shot pool is the evaluation split: examples may leak",
    "pool-too-small": "the few-shot pool is smaller than the shots requested",
    "double-space-at-join": "the query ends with a space and a choice starts with one",
    "glued-at-join": "neither the query ends nor a choice starts with whitespace: words glue",
    "trailing-space": "the prompt ends with a space",
    "empty-text": "an empty query or choice",
    "duplicate-choices": "a doc lists the same choice twice",
    "choice-count-varies": "multiple-choice docs have differing numbers of choices",
    "duplicate-docs": "docs with the same query and choices in the evaluation split",
    "stop-in-gold": "a stop sequence occurs inside a gold answer: generation stops before it",
    "generation-size-short": "generation_size is below the longest gold answer's word count",
    "identical-fewshots": "two few-shot examples of one doc are identical",
    "hash-seed-dependent": "prompts depend on PYTHONHASHSEED: lighteval's own evaluations of "
    "this task vary from run to run (set or dict order of strings); checked as built under "
    "PYTHONHASHSEED=0",
}
"""Rule name -> what it finds."""


@dataclass(frozen=True)
class Finding:
    """One rule's finding in one task."""

    rule: str
    labels: list[str]
    detail: str = ""

    def describe(self) -> str:
        """`rule: what (3 docs: ids 1, 4, 9)`."""
        what = RULES[self.rule] + (f" ({self.detail})" if self.detail else "")
        if not self.labels:
            return f"{self.rule}: {what}"
        shown = ", ".join(self.labels[:IDS_SHOWN])
        more = (
            f", ... (+{len(self.labels) - IDS_SHOWN} more)" if len(self.labels) > IDS_SHOWN else ""
        )
        count = len(self.labels)
        return f"{self.rule}: {what} ({count} doc{'s' if count != 1 else ''}: {shown}{more})"


def lint(result: TaskResult, ignored: Iterable[str] = ()) -> list[Finding]:
    """Every finding of every rule not ignored, in rule order.

    Runs on every doc of every run (lint is on by default), so the per-doc rules are one pass
    of plain checks, and what depends only on a doc's sampling methods is worked out once per
    distinct set of them.
    """
    skip = set(ignored)
    found: dict[str, list[str]] = defaultdict(list)
    details: dict[str, str] = {}
    for rule, task_check in _TASK_RULES.items():
        if rule not in skip:
            detail = task_check(result)
            if detail is not None:
                found[rule] = []
                details[rule] = detail
    kinds: dict[tuple[Any, ...], tuple[bool, bool]] = {}
    shots: dict[tuple[int, ...], bool] = {}
    by_count: dict[int, list[str]] = defaultdict(list)  # scored docs, by number of choices
    seen: set[tuple[str, tuple[Any, ...]]] = set()
    repeats: list[str] = []
    # A task's docs usually share one sampling-methods list and one examples list: the
    # previous doc's answers are kept while the very same list comes back.
    methods: Any = None
    kind = (False, False)
    examples: Any = None
    repeated = False
    for label, doc in result.docs:
        if doc.sampling_methods is not methods or not methods:
            methods = doc.sampling_methods
            key = tuple(methods)
            cached = kinds.get(key)
            if cached is None or not key:
                cached = kinds[key] = _kind(doc)
            kind = cached
        plain = _plain_choices(doc)  # the common case, worked out once for every rule
        choices = _choice_keys(doc) if plain is None else tuple(plain)
        if kind[0] and len(choices) > 1:
            by_count[len(choices)].append(label)
        asked = (doc.query, choices)
        if asked in seen:
            repeats.append(label)
        else:
            seen.add(asked)
        for rule in _doc_findings(doc, plain, choices, *kind):
            if rule not in skip:
                found[rule].append(label)
                if rule == "stop-in-gold" and rule not in details:
                    details[rule] = _stops_in_gold(doc)
        if len(doc.fewshot_samples) > 1:  # docs drawing the same examples share the answer
            if doc.fewshot_samples is not examples:
                examples = doc.fewshot_samples
                ids = tuple(map(id, examples))
                if ids not in shots:
                    shots[ids] = _repeats(examples)
                repeated = shots[ids]
            if repeated and "identical-fewshots" not in skip:
                found["identical-fewshots"].append(label)
    over_all = {"choice-count-varies": _odd_counts(by_count), "duplicate-docs": (repeats, "")}
    for rule, (labels, detail) in over_all.items():
        if rule not in skip and labels:
            found[rule] = labels
            details[rule] = detail
    return [Finding(rule, found[rule], details.get(rule, "")) for rule in RULES if rule in found]


def ignored_rules(module: Any, task_name: str) -> list[str]:
    """The rules a task module silences for `task_name` (its own entry and `"*"`)."""
    mapping = getattr(module, IGNORE_VARIABLE, None)
    if not isinstance(mapping, Mapping):
        return []
    rules: list[str] = []
    for key in (task_name, "*"):
        value = mapping.get(key, ())
        rules += [value] if isinstance(value, str) else list(value)
    return rules


def unknown_rules(rules: Iterable[str]) -> list[str]:
    """Names that are not rules (a typo in an ignore list)."""
    return [rule for rule in rules if rule not in RULES]


def lint_lines(
    result: TaskResult,
    module: Any,
    task_name: str,
    hash_seed_dependent: bool = False,
    ini_ignores: Iterable[tuple[str, list[str]]] = (),
) -> list[str]:
    """A task's findings as lines, with the module's ignore list (and the ini file's, by task
    name pattern) applied and checked: what an item reports, whether the task was built in
    this process or in a fresh one."""
    own = ignored_rules(module, task_name)
    return finding_lines(
        lambda ignored: lint(result, ignored),
        own,
        task_name,
        hash_seed_dependent,
        ini_ignores,
        IGNORE_VARIABLE,
    )


def finding_lines(
    run: Callable[[list[str]], list[Finding]],
    own: list[str],
    task_name: str,
    hash_seed_dependent: bool,
    ini_ignores: Iterable[tuple[str, list[str]]],
    where: str,
) -> list[str]:
    """The lines of `run(ignored)`'s findings, for either kind of task: the task's own ignores
    (from `where`) and the ini file's (by task name pattern, checked when the ini was read)
    applied, the hash-seed finding added, and each unknown name in its own ignores named."""
    ignored = own + [
        rule
        for pattern, rules in ini_ignores
        if fnmatch.fnmatchcase(task_name, pattern)
        for rule in rules
    ]
    findings = run(ignored)
    if hash_seed_dependent and "hash-seed-dependent" not in ignored:
        findings.append(Finding("hash-seed-dependent", []))
    lines = [finding.describe() for finding in findings]
    lines += [
        f"unknown lint rule {rule!r} in {where} (known: {', '.join(RULES)})"
        for rule in unknown_rules(own)
    ]
    return lines


# --- task rules: the pool ---------------------------------------------------------------------


def _pool_is_eval(result: TaskResult) -> str | None:
    return "" if result.pool_in_eval and result.pool_size is not None else None


def _pool_too_small(result: TaskResult) -> str | None:
    shots = result.request.num_fewshots
    if result.pool_size is not None and (result.pool_size < shots or result.shortfall):
        return f"{result.pool_size} docs for {shots} shots; {result.shortfall} docs got fewer"
    return None


_TASK_RULES: dict[str, Callable[[TaskResult], str | None]] = {
    "pool-is-eval-split": _pool_is_eval,
    "pool-too-small": _pool_too_small,
}


# --- doc rules --------------------------------------------------------------------------------


def _kind(doc: Doc) -> tuple[bool, bool]:
    """(scored by appending each choice, answered by generation), from the sampling methods;
    without any (metrics of unknown kind), docs with several choices count as scored."""
    methods = {str(getattr(method, "value", method)) for method in doc.sampling_methods}
    if not methods:
        count = len(_choice_keys(doc))
        return count > 1, count <= 1
    return SamplingMethod.LOGPROBS.value in methods, SamplingMethod.GENERATIVE.value in methods


def _doc_findings(
    doc: Doc, plain: list[str] | None, keys: tuple[Any, ...], scored: bool, generative: bool
) -> list[str]:
    """The names of the per-doc rules `doc` breaks (`plain`: its choices when a list of
    strings; `keys`: one hashable value per choice)."""
    choices = plain if plain is not None else _choice_texts(doc)
    rules = []
    end = _prompt_end(doc)
    if end in (" ", "\t"):
        rules.append("trailing-space")
    if scored:
        if end == " " and any(choice.startswith(" ") for choice in choices):
            rules.append("double-space-at-join")
        if end and not end.isspace() and any(c and not c[0].isspace() for c in choices):
            rules.append("glued-at-join")
    query = doc.query
    if (
        not query
        or query.isspace()  # no copy, as strip() makes
        or (scored and any(not choice.strip() for choice in choices))
    ):
        rules.append("empty-text")
    if len(set(keys)) < len(keys):
        rules.append("duplicate-choices")
    if generative:
        golds = _golds(doc)
        stops = [stop for stop in doc.stop_sequences or [] if stop]
        if stops and any(stop in gold for gold in golds for stop in stops):
            rules.append("stop-in-gold")
        size = doc.generation_size
        if size is not None and size > 0 and max((len(g.split()) for g in golds), default=0) > size:
            rules.append("generation-size-short")
    return rules


def _stops_in_gold(doc: Doc) -> str:
    """Which stop sequences a doc's golds hold, for the finding's text."""
    golds = _golds(doc)
    stops = [stop for stop in doc.stop_sequences or [] if stop and any(stop in g for g in golds)]
    return "stop sequence " + ", ".join(repr(stop) for stop in stops) + " in the first such doc"


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


# --- rules over all docs ----------------------------------------------------------------------


def _odd_counts(by_count: dict[int, list[str]]) -> tuple[list[str], str]:
    """Multiple-choice docs whose number of choices is not the most common one, from the
    scored docs' labels by their number of choices."""
    if len(by_count) < 2:
        return [], ""
    usual = max(by_count, key=lambda n: len(by_count[n]))
    odd = [label for n, labels in sorted(by_count.items()) if n != usual for label in labels]
    sizes = ", ".join(f"{n}: {len(labels)} docs" for n, labels in sorted(by_count.items()))
    return odd, f"choices per doc: {sizes}"
