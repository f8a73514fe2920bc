"""Each lint rule finds its mistake, names the docs, and stays quiet on a clean task."""

from __future__ import annotations

import dataclasses
import types
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_evaltasks import Doc, SamplingMethod
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.task import TaskResult
from pytest_evaltasks.engine.task_string import TaskRequest
from pytest_evaltasks.lint.rules import (
    IGNORE_VARIABLE,
    RULES,
    ignored_rules,
    lint,
    lint_lines,
    unknown_rules,
)

LOGPROBS = [SamplingMethod.LOGPROBS]
GENERATIVE = [SamplingMethod.GENERATIVE]


def mc(query: str = "Q: x\nAnswer:", choices: tuple[str, ...] = (" A", " B"), **kw: object) -> Doc:
    """A clean multiple-choice doc, scored by loglikelihood."""
    fields = {"sampling_methods": list(LOGPROBS), **kw}
    return Doc(query=query, choices=list(choices), gold_index=0, **fields)  # type: ignore[arg-type]


def gen(answer: str = "42", **kw: object) -> Doc:
    """A clean generative doc."""
    fields = {"sampling_methods": list(GENERATIVE), "stop_sequences": ["\n"],
              "generation_size": 32, **kw}  # fmt: skip
    return Doc(query="Q: what?\nA:", choices=[answer], gold_index=0, **fields)  # type: ignore[arg-type]


def result(docs: list[Doc], shots: int = 0, **kw: object) -> DocsRendered:
    """Docs as our `Task` renders them (the rules read the result alone)."""
    fields = {"pool_size": None, "shortfall": 0, "pool_from_eval": False, **kw}
    built = TaskResult(
        request=TaskRequest("t", shots),
        docs=[(str(i), doc) for i, doc in enumerate(docs)],
        num_eval_docs=len(docs),
        **fields,  # type: ignore[arg-type]
    )
    return DocsRendered(name="t", version=0, total=len(docs), task=cast(Any, None), result=built)


def own_lines(task: DocsRendered, module: object, *args: Any) -> list[str]:
    """A task's finding lines with its module's ignores."""
    return lint_lines(task, ignored_rules(module, "t"), IGNORE_VARIABLE, "t", *args)


def rules_of(task: DocsRendered, ignored: tuple[str, ...] = ()) -> dict[str, list[str]]:
    return {finding.rule: finding.labels for finding in lint(task, ignored)}


def test_a_clean_task_has_no_findings() -> None:
    assert rules_of(result([mc(), mc("Q: y\nAnswer:"), gen(), gen("7")])) == {}


SHOT = Doc(query="Q: e\nAnswer:", choices=[" A"], gold_index=0)

CASES = [
    (
        "pool-is-eval-split",
        result([mc()], 1, pool_size=3, pool_from_eval=True, pool_in_eval=True),
        [],
    ),
    ("pool-too-small", result([mc()], 5, pool_size=2, shortfall=1), []),
    ("double-space-at-join", result([mc(), mc("Q: y\nAnswer: ")]), ["1"]),
    ("glued-at-join", result([mc(), mc(choices=("A", "B"))]), ["1"]),
    ("trailing-space", result([gen(), dataclasses.replace(gen(), query="Q: what? ")]), ["1"]),
    (
        "empty-text",
        result([mc(), mc(query=" "), mc(choices=(" A", " ")), mc(query=""), mc(query="\n\t")]),
        ["1", "2", "3", "4"],
    ),
    ("duplicate-choices", result([mc(), mc(choices=(" A", " A"))]), ["1"]),
    ("choice-count-varies", result([mc(), mc(), mc(choices=(" A", " B", " C"))]), ["2"]),
    ("duplicate-docs", result([mc(), mc("Q: y\nAnswer:"), mc()]), ["2"]),
    ("stop-in-gold", result([gen(), gen("line one\nline two")]), ["1"]),
    ("generation-size-short", result([gen(), gen("a b c d e", generation_size=3)]), ["1"]),
    ("identical-fewshots", result([mc(), mc(fewshot_samples=[SHOT, SHOT])]), ["1"]),
]


@pytest.mark.parametrize(("rule", "task", "labels"), CASES, ids=[case[0] for case in CASES])
def test_each_rule_finds_its_mistake_and_names_the_docs(
    rule: str, task: DocsRendered, labels: list[str]
) -> None:
    found = rules_of(task)
    assert rule in found
    if labels:
        assert found[rule] == labels
    assert rule not in rules_of(task, ignored=(rule,))


def test_every_rule_has_a_case() -> None:
    decided_by_the_check = {"hash-seed-dependent"}  # see test_hash_seed_finding
    assert sorted(case[0] for case in CASES) == sorted(set(RULES) - decided_by_the_check)


def test_hash_seed_finding_is_reported_unless_ignored() -> None:
    import types

    task = result([mc()])
    module = types.SimpleNamespace()
    assert "hash-seed-dependent" not in " ".join(own_lines(task, module))
    lines = own_lines(task, module, True)
    assert any(
        line.startswith("hash-seed-dependent: prompts depend on PYTHONHASHSEED") for line in lines
    )
    module.evaltasks_lint_ignore = {"t": ["hash-seed-dependent"]}
    assert not any("hash-seed" in line for line in own_lines(task, module, True))


def test_generation_rules_skip_docs_scored_by_loglikelihood() -> None:
    scored = mc(choices=(" a b c d e f", " B"), generation_size=1, stop_sequences=["b"])
    found = rules_of(result([scored]))
    assert "generation-size-short" not in found and "stop-in-gold" not in found


def test_a_finding_names_a_few_ids_and_the_count() -> None:
    docs = [mc(f"Q: {i}\nAnswer:", choices=(" A", " A")) for i in range(9)]
    (finding,) = lint(result(docs))
    assert finding.describe() == (
        "duplicate-choices: a doc lists the same choice twice "
        "(9 docs: 0, 1, 2, 3, 4, ... (+4 more))"
    )


def test_a_module_mapping_silences_rules_per_task_and_for_all() -> None:
    module = types.SimpleNamespace(
        evaltasks_lint_ignore={"t": ["trailing-space"], "*": "glued-at-join", "other": ["x"]}
    )
    assert ignored_rules(module, "t") == ["trailing-space", "glued-at-join"]
    assert ignored_rules(module, "u") == ["glued-at-join"]
    assert ignored_rules(types.SimpleNamespace(), "t") == []
    assert unknown_rules(["trailing-space", "trailing_spaces"]) == ["trailing_spaces"]


SHARED_METHODS = [SamplingMethod.LOGPROBS]
SHARED_CHOICES = [" A", " B"]
SHARED_SHOTS = [SHOT, dataclasses.replace(SHOT, query="Q: f\nAnswer:", id="9")]


@st.composite
def shared_doc(draw: st.DrawFn) -> Doc:
    """A doc made of objects shared with other docs, as a task's docs are, or of equal or
    differing copies of them."""
    return Doc(
        query=draw(st.sampled_from(["Q: x\nAnswer:", "Q: x\nAnswer: ", "Q: y\nAnswer:", " ", ""])),
        choices=draw(
            st.sampled_from(
                [SHARED_CHOICES, list(SHARED_CHOICES), ["A", "B"], [" A", " A"], [" A", " "]]
            )
        ),
        gold_index=0,
        sampling_methods=draw(
            st.sampled_from([SHARED_METHODS, list(SHARED_METHODS), list(GENERATIVE), []])
        ),
        fewshot_samples=draw(st.sampled_from([SHARED_SHOTS, list(SHARED_SHOTS), [SHOT, SHOT], []])),
        stop_sequences=draw(st.sampled_from([None, ["A"]])),
        generation_size=draw(st.sampled_from([None, 1])),
    )


@given(st.lists(shared_doc(), min_size=1, max_size=8))
def test_docs_sharing_objects_get_the_findings_of_docs_that_share_none(docs: list[Doc]) -> None:
    apart = [
        dataclasses.replace(
            doc,
            choices=list(doc.choices),
            sampling_methods=list(doc.sampling_methods),
            fewshot_samples=[dataclasses.replace(shot) for shot in doc.fewshot_samples],
        )
        for doc in docs
    ]
    found = rules_of(result(docs))
    assert found == rules_of(result(apart))
    across_docs = ("choice-count-varies", "duplicate-docs")
    for position, doc in enumerate(docs):  # and each doc as if it were the task's only one
        alone = {rule for rule in rules_of(result([doc])) if rule not in across_docs}
        assert alone == {
            rule
            for rule, labels in found.items()
            if str(position) in labels and rule not in across_docs
        }
