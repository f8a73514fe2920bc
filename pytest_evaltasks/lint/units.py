"""Lint rules over rendered units (lm-eval's requests), by the same names as `rules`.

What can be told from the requests themselves: a context that ends with a space, a join of
context and continuation with two spaces or none, empty texts, repeated continuations, a
varying number of choices, repeated docs, a stop sequence inside the target of a generation,
examples drawn from the evaluated split, a pool too small for the shots asked, repeated
examples. Ignores come from the ini file's `evaltasks_lint_ignore` patterns and the task's own
files (`metadata: {evaltasks_lint_ignore: [...]}` in lm-eval YAML).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .rules import RULES, Finding, finding_lines

if TYPE_CHECKING:
    from ..engine.rendered import RenderedTask, RenderedUnit


def lint_units(rendered: RenderedTask, ignored: Iterable[str] = ()) -> list[Finding]:
    """Every finding over a rendered task's units, in rule order."""
    skip = set(ignored)
    found: dict[str, list[str]] = defaultdict(list)
    details: dict[str, str] = {}
    facts = rendered.lint
    shots = facts.get("num_fewshot") or 0
    if shots and facts.get("pool_is_eval"):
        found["pool-is-eval-split"] = []
    pool = facts.get("pool_size")
    if shots and isinstance(pool, int) and pool < shots:
        found["pool-too-small"] = []
        details["pool-too-small"] = f"{pool} docs for {shots} shots"
    counts: dict[int, list[str]] = defaultdict(list)
    seen: dict[str, str] = {}
    for unit in rendered.units:
        requests = unit.fields.get("requests", [])
        for rule in _unit_findings(unit, requests):
            found[rule].append(unit.label)
            if rule == "stop-in-gold" and rule not in details:
                details[rule] = _stop_detail(unit, requests)
        choices = [r for r in requests if r.get("type") == "loglikelihood"]
        if len(choices) > 1:
            counts[len(choices)].append(unit.label)
        key = repr([r.get("arguments") for r in requests])
        if key in seen:
            found["duplicate-docs"].append(unit.label)
        else:
            seen[key] = unit.label
        ids = [i for i in unit.fields.get("fewshot_ids", []) if i is not None]
        if len(set(map(repr, ids))) < len(ids):
            found["identical-fewshots"].append(unit.label)
    if len(counts) > 1:
        usual = max(counts, key=lambda n: len(counts[n]))
        found["choice-count-varies"] = [
            label for n, labels in sorted(counts.items()) if n != usual for label in labels
        ]
        details["choice-count-varies"] = "choices per doc: " + ", ".join(
            f"{n}: {len(labels)} docs" for n, labels in sorted(counts.items())
        )
    return [
        Finding(rule, found[rule], details.get(rule, ""))
        for rule in RULES
        if rule in found and rule not in skip
    ]


def _unit_findings(unit: RenderedUnit, requests: list[dict[str, Any]]) -> Iterable[str]:
    contexts = [r["arguments"][0] for r in requests if r.get("arguments")]
    first = contexts[0] if contexts and isinstance(contexts[0], str) else ""
    if first.endswith((" ", "\t")) and requests and requests[0].get("type") != "loglikelihood":
        yield "trailing-space"
    pairs = [
        (r["arguments"][0], r["arguments"][1])
        for r in requests
        if r.get("type") == "loglikelihood" and len(r.get("arguments", [])) > 1
    ]
    joins = [(c, k) for c, k in pairs if isinstance(c, str) and isinstance(k, str) and c and k]
    if any(c[-1] == " " and k[0] == " " for c, k in joins):
        yield "double-space-at-join"
    if any(not c[-1].isspace() and not k[0].isspace() for c, k in joins):
        yield "glued-at-join"
    rolling = requests and requests[0].get("type") == "loglikelihood_rolling"
    empty_context = (
        not rolling and contexts and not any(isinstance(c, str) and c.strip() for c in contexts)
    )
    if empty_context or any(isinstance(k, str) and not k.strip() for _, k in pairs):
        yield "empty-text"
    continuations = [k for _, k in pairs]
    if len(set(map(repr, continuations))) < len(continuations) and len(set(contexts)) <= 1:
        yield "duplicate-choices"
    stops = _stops(requests)
    target = unit.fields.get("target")
    golds = [target] if isinstance(target, str) else [t for t in target if isinstance(t, str)] \
        if isinstance(target, list) else []  # fmt: skip
    if stops and any(stop in gold for gold in golds for stop in stops):
        yield "stop-in-gold"
    size = _max_tokens(requests)
    if size is not None and size > 0 and max((len(g.split()) for g in golds), default=0) > size:
        yield "generation-size-short"


def _stops(requests: list[dict[str, Any]]) -> list[str]:
    for request in requests:
        if request.get("type") == "generate_until" and len(request.get("arguments", [])) > 1:
            kwargs = request["arguments"][1]
            until = kwargs.get("until") if isinstance(kwargs, dict) else None
            values = [until] if isinstance(until, str) else until or []
            return [stop for stop in values if isinstance(stop, str) and stop]
    return []


def _max_tokens(requests: list[dict[str, Any]]) -> int | None:
    for request in requests:
        if request.get("type") == "generate_until" and len(request.get("arguments", [])) > 1:
            kwargs = request["arguments"][1]
            value = kwargs.get("max_gen_toks") if isinstance(kwargs, dict) else None
            return value if isinstance(value, int) else None
    return None


def _stop_detail(unit: RenderedUnit, requests: list[dict[str, Any]]) -> str:
    target = unit.fields.get("target")
    texts = [target] if isinstance(target, str) else [str(t) for t in target or []]
    stops = [stop for stop in _stops(requests) if any(stop in text for text in texts)]
    return "stop sequence " + ", ".join(repr(stop) for stop in stops) + " in the first such doc"


def lint_unit_lines(
    rendered: RenderedTask,
    own_ignores: list[str],
    task_name: str,
    hash_seed_dependent: bool = False,
    ini_ignores: Iterable[tuple[str, list[str]]] = (),
) -> list[str]:
    """A rendered task's findings as lines, with its own and the ini file's ignores applied
    (unknown rule names in its own files are findings themselves)."""
    return finding_lines(
        lambda ignored: lint_units(rendered, ignored),
        list(own_ignores),
        task_name,
        hash_seed_dependent,
        ini_ignores,
        "the task's evaltasks_lint_ignore",
    )
