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

if TYPE_CHECKING:
    from ..engine.lint_input import LintDoc
    from ..engine.rendered import RenderedTask

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
    "hash-seed-dependent": "prompts depend on PYTHONHASHSEED: the harness's own evaluations "
    "of this task vary from run to run (set or dict order of strings); checked as built under "
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


def lint(rendered: RenderedTask, ignored: Iterable[str] = ()) -> list[Finding]:
    """Every finding of every rule not ignored, in rule order, over any source's rendered task
    (each doc in the rules' neutral form, `engine.rendered.LintDoc`)."""
    skip = set(ignored)
    found: dict[str, list[str]] = defaultdict(list)
    details: dict[str, str] = {}
    pool = rendered.lint_task()
    if pool.pool_is_eval:
        found["pool-is-eval-split"] = []
    if pool.pool_short is not None:
        found["pool-too-small"] = []
        details["pool-too-small"] = pool.pool_short
    by_count: dict[int, list[str]] = defaultdict(list)  # scored docs, by number of choices
    seen: set[Any] = set()
    repeats: list[str] = []
    for doc in rendered.lint_docs():
        label = doc.label
        if doc.counted > 1:
            by_count[doc.counted].append(label)
        if doc.asked in seen:
            repeats.append(label)
        else:
            seen.add(doc.asked)
        for rule in _doc_findings(doc):
            found[rule].append(label)
            if rule == "stop-in-gold" and rule not in details:
                details[rule] = _stops_in_gold(doc)
    found_all = {"choice-count-varies": _odd_counts(by_count), "duplicate-docs": (repeats, "")}
    for rule, (labels, detail) in found_all.items():
        if labels:
            found[rule] = labels
            details[rule] = detail
    return [
        Finding(rule, found[rule], details.get(rule, ""))
        for rule in RULES
        if rule in found and rule not in skip
    ]


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
    rendered: RenderedTask,
    own: list[str],
    where: str,
    task_name: str,
    hash_seed_dependent: bool = False,
    ini_ignores: Iterable[tuple[str, list[str]]] = (),
) -> list[str]:
    """A task's findings as lines, with its own ignores (from `where`, its source's place for
    them) and the ini file's (by task name pattern) applied and checked: what an item reports,
    whether the task was built in this process or in a fresh one."""
    return finding_lines(
        lambda ignored: lint(rendered, ignored), own, task_name, hash_seed_dependent,
        ini_ignores, where,
    )  # fmt: skip


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


# --- doc rules --------------------------------------------------------------------------------


def _doc_findings(doc: LintDoc) -> list[str]:
    """The names of the per-doc rules `doc` breaks."""
    rules = []
    end = doc.prompt_end
    if end in (" ", "\t"):
        rules.append("trailing-space")
    double = glued = False
    for context, choices in doc.joins:
        if context:
            last = context[-1]
            starts = [choice[0] for choice in choices if choice]
            double = double or (last == " " and " " in starts)
            glued = glued or (not last.isspace() and any(not c.isspace() for c in starts))
    if double:
        rules.append("double-space-at-join")
    if glued:
        rules.append("glued-at-join")
    if doc.blank_query or any(not choice.strip() for choice in doc.scored):
        rules.append("empty-text")
    keys = doc.choice_keys
    if len(set(keys)) < len(keys):
        rules.append("duplicate-choices")
    golds, stops = doc.golds, doc.stops
    if stops and any(stop in gold for gold in golds for stop in stops):
        rules.append("stop-in-gold")
    size = doc.max_tokens
    if size is not None and size > 0 and max((len(g.split()) for g in golds), default=0) > size:
        rules.append("generation-size-short")
    if doc.fewshots_repeat:
        rules.append("identical-fewshots")
    return rules


def _stops_in_gold(doc: LintDoc) -> str:
    """Which stop sequences a doc's golds hold, for the finding's text."""
    stops = [stop for stop in doc.stops if any(stop in gold for gold in doc.golds)]
    return "stop sequence " + ", ".join(repr(stop) for stop in stops) + " in the first such doc"


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
