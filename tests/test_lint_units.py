"""The lint rules over another harness's requests: each rule finds its mistake in lm-eval-shaped
requests (read into the rules' neutral form by the lm-eval source, without lm-eval itself),
and stays quiet on a clean task."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_evaltasks.engine.lint_input import LintTask
from pytest_evaltasks.engine.rendered import RenderedUnit, UnitsRendered
from pytest_evaltasks.lint.rules import lint
from pytest_evaltasks.sources.lm_eval.source import _lint_doc


def choice(context: str = "Q: x\nAnswer:", *continuations: str) -> list[dict[str, Any]]:
    """A multiple-choice doc's requests: one loglikelihood request per continuation."""
    return [
        {"type": "loglikelihood", "arguments": [context, c], "repeats": 1}
        for c in continuations or (" A", " B")
    ]


def generate(context: str = "Q: what?\nA:", until: Any = "\n", size: int = 32) -> list[Any]:
    kwargs = {"until": until, "max_gen_toks": size}
    return [{"type": "generate_until", "arguments": [context, kwargs], "repeats": 1}]


def unit(
    requests: list[dict[str, Any]], target: Any = " A", fewshot_ids: list[Any] | None = None
) -> tuple[list[dict[str, Any]], Any, list[Any]]:
    return requests, target, fewshot_ids or []


def rendered(docs: list[tuple[Any, Any, Any]], pool: LintTask | None = None) -> UnitsRendered:
    units = [
        RenderedUnit(str(i), i, {}, lint=_lint_doc(str(i), requests, target, ids))
        for i, (requests, target, ids) in enumerate(docs)
    ]
    return UnitsRendered(
        name="t|0", version=0, total=len(units), units=units, lint=pool or LintTask(False, None)
    )


def rules_of(task: UnitsRendered) -> dict[str, list[str]]:
    return {finding.rule: finding.labels for finding in lint(task)}


def test_a_clean_task_has_no_findings() -> None:
    docs = [unit(choice()), unit(choice("Q: y\nAnswer:")), unit(generate(), "42")]
    assert rules_of(rendered(docs)) == {}


CASES = [
    ("pool-is-eval-split", rendered([unit(choice())], LintTask(True, None)), []),
    ("pool-too-small", rendered([unit(choice())], LintTask(False, "2 docs for 5 shots")), []),
    ("double-space-at-join", rendered([unit(choice()), unit(choice("Q: y\nA: "))]), ["1"]),
    ("glued-at-join", rendered([unit(choice()), unit(choice("Q: y\nA:", "A", "B"))]), ["1"]),
    ("trailing-space", rendered([unit(generate(), "4"), unit(generate("Q? "), "4")]), ["1"]),
    ("empty-text", rendered([unit(choice()), unit(choice("Q:", " A", " "))]), ["1"]),
    ("duplicate-choices", rendered([unit(choice()), unit(choice("Q: y", " A", " A"))]), ["1"]),
    (
        "choice-count-varies",
        rendered([unit(choice()), unit(choice("Q: y")), unit(choice("Q: z", " A", " B", " C"))]),
        ["2"],
    ),
    ("duplicate-docs", rendered([unit(choice()), unit(choice())]), ["1"]),
    ("stop-in-gold", rendered([unit(generate(), "4"), unit(generate(), "a\nb")]), ["1"]),
    (
        "generation-size-short",
        rendered([unit(generate(), "4"), unit(generate("Q: z", size=2), "a b c")]),
        ["1"],
    ),
    (
        "identical-fewshots",
        rendered([unit(choice(), fewshot_ids=[1, 2]), unit(choice("Q: y"), fewshot_ids=[3, 3])]),
        ["1"],
    ),
]


@pytest.mark.parametrize(("rule", "task", "labels"), CASES, ids=[case[0] for case in CASES])
def test_each_rule_finds_its_mistake_in_a_harness_s_requests(
    rule: str, task: UnitsRendered, labels: list[str]
) -> None:
    found = rules_of(task)
    assert rule in found
    if labels:
        assert found[rule] == labels
    assert rule not in {finding.rule for finding in lint(task, [rule])}


def test_a_scored_context_ending_in_a_space_is_not_a_trailing_space() -> None:
    """A loglikelihood context is never continued freely: only its join is judged."""
    found = rules_of(rendered([unit(choice("Q: y\nAnswer: ", "A", "B"))]))
    assert "trailing-space" not in found and "double-space-at-join" not in found
