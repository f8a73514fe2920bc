"""Few-shot selection (prompt steps 4-5; differences): hand-derived expectations.

Every expected value below is derived from the algorithm of docs/differences-from-lighteval.md
(prompt step 5) with the standard library's
`random.Random`, step by step, in the test itself, and also written out as a literal. Nothing is
computed by the engine. Docs are identified by their query: eval docs are `e0`..`e9`, few-shot
(train) docs `t0`..`t11`; a literal `[7, 3, ...]` means `e7, e3, ...` (or `t7, ...`).

Eval order: `random.Random(42).shuffle(list(range(10)))` is `[7, 3, 2, 8, 5, 6, 9, 4, 0, 1]`.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks import Doc, FewShotSampler, Task, TaskConfig
from pytest_evaltasks.engine.task import FewShotFromEvalWarning
from pytest_evaltasks.errors import EvalTaskError, FewShotError

SHUFFLED_10 = [7, 3, 2, 8, 5, 6, 9, 4, 0, 1]

# labels of t0..t11: A x6, B x4, C x2; in file order the labels first appear as B, A, C
LABELS_6_4_2 = ["B", "A", "C", "A", "B", "A", "A", "B", "C", "A", "B", "A"]
# labels of t0..t11: A x4, B x4, C x2, D x2 (two ties); first appearance D, B, A, C
LABELS_TIED = ["D", "B", "A", "C", "B", "A", "D", "A", "B", "C", "A", "B"]


def prompt(row: dict[str, Any], task_name: str) -> Doc:
    return Doc(query=row["q"], choices=[row["label"]], gold_index=0)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def make_task(
    tmp_path: Path,
    selection: str | None,
    shots: int,
    train_labels: list[str] | None = LABELS_6_4_2,
    n_eval: int = 10,
    **overrides: Any,
) -> Task:
    """A task over `e0..e{n_eval-1}` (validation) and `t0..` (train, with the given labels)."""
    data = tmp_path / "data"
    base = data / "org/fs/default"
    write_jsonl(base / "validation.jsonl", [{"q": f"e{i}", "label": "E"} for i in range(n_eval)])
    if train_labels is not None:
        write_jsonl(
            base / "train.jsonl",
            [{"q": f"t{i}", "label": label} for i, label in enumerate(train_labels)],
        )
    fields: dict[str, Any] = {
        "name": "fs",
        "prompt_function": prompt,
        "hf_repo": "org/fs",
        "hf_subset": "default",
        "metrics": ["acc"],
        "few_shots_select": selection,
        "num_fewshots": shots,
    }
    fields.update(overrides)
    return Task(TaskConfig(**fields), data_dir=data)


def order_of(docs: list[Doc]) -> list[str]:
    return [doc.query for doc in docs]


def shots_of(docs: list[Doc]) -> dict[str, list[str]]:
    return {doc.query: [example.query for example in doc.fewshot_samples] for doc in docs}


def t(*indices: int) -> list[str]:
    return [f"t{i}" for i in indices]


def e(*indices: int) -> list[str]:
    return [f"e{i}" for i in indices]


# --- doc order -------------------------------------------------------------------------------


def test_seed_42_shuffle_of_ten_docs() -> None:
    derived = list(range(10))
    random.Random(42).shuffle(derived)
    assert derived == SHUFFLED_10


@pytest.mark.parametrize(
    "selection",
    [None, "balanced", "random", "sequential", "random_sampling", "random_sampling_from_train"],
)
def test_doc_order_is_the_seed_42_shuffle_for_every_selection(
    tmp_path: Path, selection: str | None
) -> None:
    assert order_of(make_task(tmp_path, selection, 0).get_docs()) == e(*SHUFFLED_10)
    assert order_of(make_task(tmp_path, selection, 2).get_docs()) == e(*SHUFFLED_10)


def test_max_samples_keeps_the_first_of_the_shuffled_order(tmp_path: Path) -> None:
    task = make_task(tmp_path, "sequential", 1)
    assert order_of(task.get_docs(max_samples=4)) == e(7, 3, 2, 8)
    assert order_of(task.get_docs(max_samples=100)) == e(*SHUFFLED_10)


def test_zero_shots_gives_no_examples(tmp_path: Path) -> None:
    docs = make_task(tmp_path, None, 0).get_docs()
    assert all(doc.fewshot_samples == [] for doc in docs)


# --- balanced --------------------------------------------------------------------------------


def test_balanced_pool_of_three_labels_sized_6_4_2(tmp_path: Path) -> None:
    # buckets (file order): A = t1 t3 t5 t6 t9 t11, B = t0 t4 t7 t10, C = t2 t8.
    # Sizes 6, 4, 2 differ: each size group holds one label and r.shuffle of a one-element
    # list draws nothing, so the label order is A, B, C. 3 shots -> min(12, 3 + 1) = 4 draws.
    r = random.Random(0)
    a, b, c = [1, 3, 5, 6, 9, 11], [0, 4, 7, 10], [2, 8]
    r.shuffle(["A"]), r.shuffle(["B"]), r.shuffle(["C"])
    derived = [a.pop(r.randrange(6)), b.pop(r.randrange(4)), c.pop(r.randrange(2))]
    derived.append(a.pop(r.randrange(5)))
    assert derived == [6, 10, 2, 5]

    task = make_task(tmp_path, "balanced", 3)
    assert order_of(task.sampler.prepared_pool(3, 0)) == t(6, 10, 2, 5)
    docs = task.get_docs()
    # the pool is the train split, so nothing leaks: every doc gets the first three
    assert shots_of(docs) == {f"e{i}": t(6, 10, 2) for i in range(10)}


def test_balanced_is_the_default_selection(tmp_path: Path) -> None:
    docs = make_task(tmp_path, None, 3).get_docs()
    assert shots_of(docs)["e0"] == t(6, 10, 2)


def test_balanced_cycles_labels_more_than_once(tmp_path: Path) -> None:
    # 5 shots -> 6 draws: A, B, C, A, B, C
    r = random.Random(0)
    a, b, c = [1, 3, 5, 6, 9, 11], [0, 4, 7, 10], [2, 8]
    derived = []
    for bucket in (a, b, c, a, b, c):
        derived.append(bucket.pop(r.randrange(len(bucket))))
    assert derived == [6, 10, 2, 5, 7, 8]

    docs = make_task(tmp_path, "balanced", 5).get_docs()
    assert shots_of(docs)["e4"] == t(6, 10, 2, 5, 7)


def test_balanced_with_variance_seed_1(tmp_path: Path) -> None:
    r = random.Random(1)
    a, b, c = [1, 3, 5, 6, 9, 11], [0, 4, 7, 10], [2, 8]
    derived = [a.pop(r.randrange(6)), b.pop(r.randrange(4)), c.pop(r.randrange(2))]
    derived.append(a.pop(r.randrange(5)))
    assert derived == [3, 0, 8, 1]

    docs = make_task(tmp_path, "balanced", 3).get_docs(variance_seed=1)
    assert shots_of(docs)["e9"] == t(3, 0, 8)


def test_balanced_tied_sizes_are_shuffled_from_sorted_order(tmp_path: Path) -> None:
    # buckets: A = t2 t5 t7 t10, B = t1 t4 t8 t11, C = t3 t9, D = t0 t6.
    # Size 4 holds [A, B] and size 2 holds [C, D] (sorted, not first-seen D, B, A, C);
    # each tie group is shuffled with r, then labels are cycled.
    r = random.Random(3)
    fours, twos = ["A", "B"], ["C", "D"]
    r.shuffle(fours)
    r.shuffle(twos)
    assert fours + twos == ["B", "A", "D", "C"]  # seed 3 swaps both ties
    buckets = {"A": [2, 5, 7, 10], "B": [1, 4, 8, 11], "C": [3, 9], "D": [0, 6]}
    derived = [buckets[label].pop(r.randrange(len(buckets[label]))) for label in fours + twos]
    assert derived == [8, 10, 0, 3]

    task = make_task(tmp_path, "balanced", 3, train_labels=LABELS_TIED)
    assert order_of(task.sampler.prepared_pool(3, 3)) == t(8, 10, 0, 3)
    assert shots_of(task.get_docs(variance_seed=3))["e1"] == t(8, 10, 0)


def test_balanced_tied_sizes_seed_0_keeps_sorted_order(tmp_path: Path) -> None:
    r = random.Random(0)
    fours, twos = ["A", "B"], ["C", "D"]
    r.shuffle(fours)
    r.shuffle(twos)
    assert fours + twos == ["A", "B", "C", "D"]
    buckets = {"A": [2, 5, 7, 10], "B": [1, 4, 8, 11], "C": [3, 9], "D": [0, 6]}
    derived = []
    for label in fours + twos + fours:  # 5 shots -> 6 draws
        bucket = buckets[label]
        derived.append(bucket.pop(r.randrange(len(bucket))))
    assert derived == [2, 8, 9, 6, 7, 4]

    docs = make_task(tmp_path, "balanced", 5, train_labels=LABELS_TIED).get_docs()
    assert shots_of(docs)["e0"] == t(2, 8, 9, 6, 7)


def test_balanced_falsy_label_is_a_normal_label(tmp_path: Path) -> None:
    # gold strings "", "x", "", "y", "", "x": buckets "" = t0 t2 t4, x = t1 t5, y = t3.
    # Sorted labels "", "x", "y" with sizes 3, 2, 1. The reference stops at the "" label and
    # returns no examples at all; we draw "", x, y, "" like any other labels.
    r = random.Random(0)
    empty, x, y = [0, 2, 4], [1, 5], [3]
    derived = [empty.pop(r.randrange(3)), x.pop(r.randrange(2)), y.pop(r.randrange(1))]
    derived.append(empty.pop(r.randrange(2)))
    assert derived == [2, 5, 3, 4]

    task = make_task(tmp_path, "balanced", 3, train_labels=["", "x", "", "y", "", "x"])
    assert order_of(task.sampler.prepared_pool(3, 0)) == t(2, 5, 3, 4)
    assert shots_of(task.get_docs())["e5"] == t(2, 5, 3)


def test_balanced_uses_fewshot_sorting_class_before_gold() -> None:
    # every gold is "same", but the sorting classes split the pool 2 / 1
    docs = [
        Doc(query="p0", choices=["same"], gold_index=0, fewshot_sorting_class="k1"),
        Doc(query="p1", choices=["same"], gold_index=0, fewshot_sorting_class="k2"),
        Doc(query="p2", choices=["same"], gold_index=0, fewshot_sorting_class="k1"),
    ]
    # sizes: k1 = [p0, p2] (2), k2 = [p1] (1); 1 shot -> 2 draws: k1 then k2
    r = random.Random(0)
    k1, k2 = ["p0", "p2"], ["p1"]
    derived = [k1.pop(r.randrange(2)), k2.pop(r.randrange(1))]
    sampler = FewShotSampler(lambda: docs, "balanced", "t")
    assert [d.query for d in sampler.prepared_pool(1, 0)] == derived


def test_balanced_pool_smaller_than_requested_returns_what_there_is(tmp_path: Path) -> None:
    docs = make_task(tmp_path, "balanced", 5, train_labels=["A", "B"]).get_docs()
    # min(len(pool) = 2, 6) = 2 draws: A then B, each from a one-element bucket
    assert shots_of(docs)["e0"] == t(0, 1)


# --- sequential ------------------------------------------------------------------------------


def test_sequential_seed_0_takes_the_pool_in_order(tmp_path: Path) -> None:
    docs = make_task(tmp_path, "sequential", 3).get_docs()
    assert shots_of(docs) == {f"e{i}": t(0, 1, 2) for i in range(10)}


def test_sequential_rotation_for_seeds_1_and_2(tmp_path: Path) -> None:
    # rotated left by shots x seed: 3 for seed 1, 6 for seed 2, 15 % 12 = 3 for seed 5
    pool = list(range(12))
    assert (pool[3:] + pool[:3])[:3] == [3, 4, 5]
    assert (pool[6:] + pool[:6])[:3] == [6, 7, 8]
    task = make_task(tmp_path, "sequential", 3)
    assert shots_of(task.get_docs(variance_seed=1))["e0"] == t(3, 4, 5)
    # seed 2 rotates the original pool, not the pool seed 1 already rotated (3 + 6 = 9)
    assert shots_of(task.get_docs(variance_seed=2))["e0"] == t(6, 7, 8)
    assert shots_of(task.get_docs(variance_seed=1))["e0"] == t(3, 4, 5)
    assert shots_of(task.get_docs(variance_seed=0))["e0"] == t(0, 1, 2)
    assert shots_of(task.get_docs(variance_seed=5))["e0"] == t(3, 4, 5)
    # the cached few-shot docs themselves were never rotated
    assert order_of(task.fewshot_docs()) == t(*range(12))


def test_sequential_seed_2_first(tmp_path: Path) -> None:
    task = make_task(tmp_path, "sequential", 2)
    assert shots_of(task.get_docs(variance_seed=2))["e3"] == t(4, 5)
    assert order_of(task.sampler.prepared_pool(2, 2)) == t(4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3)
    assert order_of(task.fewshot_docs()) == t(*range(12))


# --- random ----------------------------------------------------------------------------------


def test_random_seed_0_is_file_order(tmp_path: Path) -> None:
    task = make_task(tmp_path, "random", 3)
    assert order_of(task.sampler.prepared_pool(3, 0)) == t(*range(12))
    assert shots_of(task.get_docs()) == {f"e{i}": t(0, 1, 2) for i in range(10)}


def test_random_seed_k_is_random_k_shuffle(tmp_path: Path) -> None:
    derived = list(range(12))
    random.Random(7).shuffle(derived)
    assert derived == [7, 11, 3, 10, 8, 4, 9, 1, 0, 6, 2, 5]
    task = make_task(tmp_path, "random", 3)
    assert order_of(task.sampler.prepared_pool(3, 7)) == t(*derived)
    assert shots_of(task.get_docs(variance_seed=7)) == {f"e{i}": t(7, 11, 3) for i in range(10)}
    assert order_of(task.fewshot_docs()) == t(*range(12))


# --- random_sampling / random_sampling_from_train ---------------------------------------------

# random_sampling, 3 shots, seed 0: after rnd.shuffle of the 10 eval docs, the same rnd draws
# rnd.sample(pool of 12, 4) for each doc in shuffled order.
RANDOM_SAMPLING_DRAWS = {
    7: [9, 6, 0, 11],
    3: [1, 3, 10, 8],
    2: [9, 0, 8, 3],
    8: [11, 10, 8, 6],
    5: [3, 7, 9, 4],
    6: [0, 2, 6, 5],
    9: [4, 2, 3, 5],
    4: [1, 11, 6, 10],
    0: [5, 11, 9, 4],
    1: [0, 7, 8, 1],
}
# random_sampling_from_train: rnd.sample(pool of 12, 3) instead
FROM_TRAIN_DRAWS = {
    7: [9, 6, 0],
    3: [0, 1, 3],
    2: [3, 8, 9],
    8: [0, 8, 3],
    5: [11, 10, 8],
    6: [6, 3, 7],
    9: [9, 4, 0],
    4: [2, 6, 5],
    0: [4, 2, 3],
    1: [5, 1, 10],
}


def derive_sampling(pool: list[int], draws: int) -> dict[int, list[int]]:
    """The per-doc draw written out: one generator shuffles, then samples doc by doc."""
    rnd = random.Random(42)
    eval_order = list(range(10))
    rnd.shuffle(eval_order)
    assert eval_order == SHUFFLED_10
    return {doc: rnd.sample(pool, draws) for doc in eval_order}


def test_random_sampling_draws_n_plus_one_with_the_shuffling_generator(tmp_path: Path) -> None:
    assert derive_sampling(list(range(12)), 4) == RANDOM_SAMPLING_DRAWS
    docs = make_task(tmp_path, "random_sampling", 3).get_docs()
    assert order_of(docs) == e(*SHUFFLED_10)
    assert shots_of(docs) == {f"e{d}": t(*drawn[:3]) for d, drawn in RANDOM_SAMPLING_DRAWS.items()}


def test_random_sampling_from_train_draws_n(tmp_path: Path) -> None:
    assert derive_sampling(list(range(12)), 3) == FROM_TRAIN_DRAWS
    docs = make_task(tmp_path, "random_sampling_from_train", 3).get_docs()
    assert shots_of(docs) == {f"e{d}": t(*drawn) for d, drawn in FROM_TRAIN_DRAWS.items()}


def test_random_sampling_with_max_samples_consumes_only_kept_docs(tmp_path: Path) -> None:
    docs = make_task(tmp_path, "random_sampling_from_train", 3).get_docs(max_samples=3)
    assert shots_of(docs) == {"e7": t(9, 6, 0), "e3": t(0, 1, 3), "e2": t(3, 8, 9)}


def test_random_sampling_with_variance_seed_samples_the_shuffled_pool(tmp_path: Path) -> None:
    pool = list(range(12))
    random.Random(2).shuffle(pool)
    assert pool == [9, 11, 3, 4, 7, 6, 8, 2, 5, 10, 1, 0]
    derived = derive_sampling(pool, 4)
    assert derived[7] == [10, 8, 9, 0]
    assert derived[3] == [11, 4, 1, 5]
    docs = make_task(tmp_path, "random_sampling", 3).get_docs(variance_seed=2)
    assert shots_of(docs)["e7"] == t(10, 8, 9)
    assert shots_of(docs)["e3"] == t(11, 4, 1)
    assert shots_of(docs) == {f"e{d}": t(*drawn[:3]) for d, drawn in derived.items()}


@pytest.mark.parametrize(
    ("selection", "draws"), [("random_sampling", 4), ("random_sampling_from_train", 3)]
)
def test_sampling_pool_too_small_names_task_pool_size_and_count(
    tmp_path: Path, selection: str, draws: int
) -> None:
    task = make_task(tmp_path, selection, 3, train_labels=["A", "B"])
    with pytest.raises(FewShotError) as info:
        task.get_docs()
    message = str(info.value)
    assert "'fs'" in message
    assert f"draws {draws} examples" in message
    assert "has only 2 docs" in message
    assert isinstance(info.value, EvalTaskError)


@pytest.mark.parametrize("selection", ["balanced", "random", "sequential"])
def test_other_selections_return_fewer_examples_from_a_small_pool(
    tmp_path: Path, selection: str
) -> None:
    docs = make_task(tmp_path, selection, 4, train_labels=["A", "B"]).get_docs()
    assert all(
        sorted(example.query for example in doc.fewshot_samples) == ["t0", "t1"] for doc in docs
    )


# --- leak removal by content (docs/differences-from-lighteval.md, difference 1) ------------


def test_leak_removal_when_the_pool_is_the_eval_split_sequential(tmp_path: Path) -> None:
    task = make_task(tmp_path, "sequential", 2, train_labels=None, hf_avail_splits=["validation"])
    with pytest.warns(FewShotFromEvalWarning, match="'fs'"):
        docs = task.get_docs()
    assert task.fewshot_from_eval
    expected = {f"e{i}": e(0, 1) for i in range(10)}
    expected.update({"e0": e(1, 2), "e1": e(0, 2), "e2": e(0, 1)})
    assert shots_of(docs) == expected


def test_leak_removal_when_the_pool_is_the_eval_split_random_sampling(tmp_path: Path) -> None:
    derived = derive_sampling(list(range(10)), 4)
    assert derived[3] == [1, 3, 8, 4]  # e3 draws itself: removed, then cut to 3
    assert derived[8] == [8, 6, 3, 7]  # e8 draws itself first
    task = make_task(
        tmp_path, "random_sampling", 3, train_labels=None, hf_avail_splits=["validation"]
    )
    with pytest.warns(FewShotFromEvalWarning):
        docs = task.get_docs()
    shots = shots_of(docs)
    assert shots["e3"] == e(1, 8, 4)
    assert shots["e8"] == e(6, 3, 7)
    assert shots["e7"] == e(9, 6, 0)
    assert shots == {f"e{d}": e(*[x for x in drawn if x != d][:3]) for d, drawn in derived.items()}


def test_leak_removal_when_the_pool_is_the_eval_split_balanced(tmp_path: Path) -> None:
    # all eval golds are "E": one bucket; 2 shots -> 3 draws from [e0..e9]
    r = random.Random(0)
    bucket = list(range(10))
    prepared = [bucket.pop(r.randrange(len(bucket))) for _ in range(3)]
    task = make_task(tmp_path, "balanced", 2, train_labels=None, hf_avail_splits=["validation"])
    with pytest.warns(FewShotFromEvalWarning):
        shots = shots_of(task.get_docs())
    for i in range(10):
        assert shots[f"e{i}"] == e(*[x for x in prepared if x != i][:2])
    assert any(i in prepared for i in range(10))


def _content_prompt(row: dict[str, Any], task_name: str) -> Doc:
    """Rows name their question's every part: choices, gold and instruction."""
    return Doc(
        query=row["q"],
        choices=[row["label"], " alt"],
        gold_index=row.get("gold") or 0,  # missing keys read as None, as in `datasets`
        instruction=row.get("instruction"),
    )


def test_leak_removal_compares_content_not_identity(tmp_path: Path) -> None:
    """A train row with the same content as an eval doc is not that doc's example; a train row
    with the same query but other choices, another gold or another instruction is."""
    data = tmp_path / "data"
    write_jsonl(
        data / "org/fs/default/validation.jsonl",
        [{"q": "e0", "label": "E"}, {"q": "same", "label": "L"}],
    )
    write_jsonl(
        data / "org/fs/default/train.jsonl",
        [
            {"q": "t0", "label": "L"},
            {"q": "same", "label": "L"},  # 1: the eval doc "same" itself
            {"q": "t2", "label": "L"},
            {"q": "same", "label": "other"},  # 3: other choices
            {"q": "same", "label": "L", "gold": 1},  # 4: another gold
            {"q": "same", "label": "L", "instruction": "Read:"},  # 5: another instruction
            {"q": "t6", "label": "L"},
        ],
    )
    config = TaskConfig(
        name="fs",
        prompt_function=_content_prompt,
        hf_repo="org/fs",
        hf_subset="default",
        metrics=[],
        few_shots_select="sequential",
        num_fewshots=5,
    )
    docs = {doc.query: doc for doc in Task(config, data_dir=data).get_docs()}
    assert [example.id for example in docs["same"].fewshot_samples] == ["0", "2", "3", "4", "5"]
    assert [example.id for example in docs["e0"].fewshot_samples] == ["0", "1", "2", "3", "4"]


# --- few-shot split choice -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("available", "evaluation", "expected"),
    [
        (["train", "validation", "test"], ["test"], "train"),
        (["test", "dev", "validation"], ["test"], "dev"),
        (["test", "validation"], ["test"], "validation"),
        (["test", "my_default"], ["test"], "my_default"),
        (["test", "extra", "dev_set", "train_small"], ["test"], "train_small"),
        (["validation", "valid2"], ["validation"], "valid2"),
        (["test", "other"], ["test"], None),
        (["train"], ["train"], None),
    ],
)
def test_few_shot_split_priority(
    tmp_path: Path, available: list[str], evaluation: list[str], expected: str | None
) -> None:
    task = make_task(tmp_path, None, 0, hf_avail_splits=available, evaluation_splits=evaluation)
    assert task.fewshot_split == expected
    assert task.fewshot_from_eval is (expected is None)


def test_explicit_few_shots_split_wins(tmp_path: Path) -> None:
    task = make_task(tmp_path, "sequential", 1, few_shots_split="validation")
    assert task.fewshot_split == "validation"
    assert shots_of(task.get_docs())["e0"] == e(1)


# --- the sampler on its own ------------------------------------------------------------------


def test_unknown_selection_names_task_and_value() -> None:
    with pytest.raises(FewShotError) as info:
        FewShotSampler(lambda: [], "clever", "my_task")
    message = str(info.value)
    assert "'my_task'" in message
    assert "'clever'" in message
    assert "balanced" in message


def test_zero_shots_never_asks_for_the_pool() -> None:
    def pool() -> list[Doc]:
        raise AssertionError("pool loaded for a 0-shot task")

    sampler = FewShotSampler(pool, "balanced", "t")
    assert sampler.sample(0, rng=random.Random(1), doc=Doc("q", ["a"], 0)) == []


def test_pool_is_prepared_once_per_seed() -> None:
    calls = []
    docs = [Doc(f"p{i}", ["a"], 0) for i in range(4)]

    def pool() -> list[Doc]:
        calls.append(1)
        return docs

    sampler = FewShotSampler(pool, "random", "t")
    for _ in range(3):
        sampler.sample(2, variance_seed=0)
        sampler.sample(2, variance_seed=1)
    assert len(calls) == 2
