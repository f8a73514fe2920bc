"""`Task` (prompt steps 3-4; differences): docs, runtime fields, dedupe, errors.

The steps and differences are those of docs/differences-from-lighteval.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks import Doc, Task, TaskConfig
from pytest_evaltasks.errors import DatasetError, EvalTaskError, PromptFunctionError

Row = dict[str, Any]


def write_jsonl(path: Path, rows: list[Row]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def prompt(row: Row, task_name: str) -> Doc:
    return Doc(query=row["q"], choices=[" yes", " no"], gold_index=row.get("gold", 0))


def make_task(
    tmp_path: Path,
    eval_rows: list[Row],
    train_rows: list[Row] | None = None,
    prompt_function: Any = prompt,
    **overrides: Any,
) -> Task:
    data = tmp_path / "data"
    write_jsonl(data / "org/t/default/validation.jsonl", eval_rows)
    if train_rows is not None:
        write_jsonl(data / "org/t/default/train.jsonl", train_rows)
    fields: dict[str, Any] = {
        "name": "the_task",
        "prompt_function": prompt_function,
        "hf_repo": "org/t",
        "hf_subset": "default",
        "metrics": ["acc"],
    }
    fields.update(overrides)
    return Task(TaskConfig(**fields), data_dir=str(data))


def rows(n: int, prefix: str = "q") -> list[Row]:
    return [{"q": f"{prefix}{i}"} for i in range(n)]


def snapshot(docs: list[Doc]) -> list[tuple[Any, ...]]:
    """Everything observable about docs and their examples, for comparing two calls."""
    return [
        (
            doc.id,
            doc.query,
            doc.task_name,
            tuple((ex.id, ex.query) for ex in doc.fewshot_samples),
            doc.generation_size,
            tuple(doc.stop_sequences or ()),
            doc.num_samples,
        )
        for doc in docs
    ]


# --- identity ----------------------------------------------------------------------------------


def test_full_name_name_and_version(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(2), num_fewshots=4, version=12)
    assert task.full_name == "the_task|4"
    assert task.name == "the_task"
    assert task.num_fewshots == 4
    assert task.version == 12
    assert repr(task) == "Task('the_task|4')"


# --- runtime fields ---------------------------------------------------------------------------


def test_runtime_fields_are_set_on_every_doc(tmp_path: Path) -> None:
    task = make_task(
        tmp_path,
        rows(3),
        rows(3, "t"),
        num_fewshots=1,
        generation_size=64,
        stop_sequence=("\n\n", "Q:"),
        num_samples=[1, 8, 4],
        generation_grammar={"type": "regex", "value": "[AB]"},
        few_shots_select="sequential",
    )
    docs = task.get_docs()
    assert len(docs) == 3
    for doc in docs:
        assert doc.task_name == "the_task|1"
        assert doc.generation_size == 64
        assert doc.stop_sequences == ["\n\n", "Q:"]
        assert doc.num_samples == 8
        assert doc.generation_grammar == {"type": "regex", "value": "[AB]"}
        assert [ex.query for ex in doc.fewshot_samples] == ["t0"]
    assert sorted(doc.id for doc in docs) == ["0", "1", "2"]


def test_doc_ids_are_row_indices(tmp_path: Path) -> None:
    docs = make_task(tmp_path, rows(5)).eval_docs()
    assert [(doc.id, doc.query) for doc in docs] == [(str(i), f"q{i}") for i in range(5)]


def test_num_samples_defaults_to_one(tmp_path: Path) -> None:
    assert {doc.num_samples for doc in make_task(tmp_path, rows(3)).get_docs()} == {1}


# --- idempotence (docs/differences-from-lighteval.md, difference 4) -----------------------


@pytest.mark.parametrize(
    "selection",
    ["balanced", "random", "sequential", "random_sampling", "random_sampling_from_train"],
)
def test_get_docs_is_idempotent(tmp_path: Path, selection: str) -> None:
    task = make_task(tmp_path, rows(8), rows(9, "t"), num_fewshots=2, few_shots_select=selection)
    first = task.get_docs()
    second = task.get_docs()
    assert snapshot(first) == snapshot(second)
    assert [doc.query for doc in first] == [f"q{i}" for i in (3, 4, 6, 7, 2, 5, 0, 1)]
    # new objects each call, and the cached eval docs keep file order
    assert all(a is not b for a, b in zip(first, second, strict=True))
    assert [doc.query for doc in task.eval_docs()] == [f"q{i}" for i in range(8)]
    # a third call after other seeds still gives the same result
    task.get_docs(variance_seed=3)
    assert snapshot(task.get_docs()) == snapshot(first)


def test_shuffle_order_of_eight_docs_is_the_stdlib_seed_42_shuffle() -> None:
    import random

    order = list(range(8))
    random.Random(42).shuffle(order)
    assert order == [3, 4, 6, 7, 2, 5, 0, 1]


def test_mutating_returned_docs_does_not_change_the_next_call(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(4), rows(4, "t"), num_fewshots=1, few_shots_select="sequential")
    first = task.get_docs()
    expected = snapshot(first)
    first[0].fewshot_samples.clear()
    first[1].task_name = "mangled"
    first[2].stop_sequences.append("X")  # type: ignore[union-attr]
    assert snapshot(task.get_docs()) == expected


# --- duplicate removal (docs/differences-from-lighteval.md, difference 5) -----------------


def test_three_identical_rows_give_one_doc(tmp_path: Path) -> None:
    task = make_task(
        tmp_path, [{"q": "same"}] * 3 + [{"q": "other"}], must_remove_duplicate_docs=True
    )
    docs = task.eval_docs()
    assert [(doc.id, doc.query) for doc in docs] == [("0", "same"), ("3", "other")]
    assert len(task.get_docs()) == 2


def test_duplicates_kept_without_the_flag(tmp_path: Path) -> None:
    task = make_task(tmp_path, [{"q": "same"}] * 3)
    assert [doc.id for doc in task.eval_docs()] == ["0", "1", "2"]


def test_dedupe_ignores_row_columns_the_doc_does_not_use(tmp_path: Path) -> None:
    task = make_task(
        tmp_path,
        [{"q": "same", "row_id": i} for i in range(3)],
        must_remove_duplicate_docs=True,
    )
    assert [doc.id for doc in task.eval_docs()] == ["0"]


def test_dedupe_keeps_docs_that_differ_in_any_field(tmp_path: Path) -> None:
    def with_specific(row: Row, task_name: str) -> Doc:
        return Doc(query="q", choices=["a", "b"], gold_index=row["gold"], specific=row["spec"])

    task = make_task(
        tmp_path,
        [
            {"gold": 0, "spec": {"k": 1}},
            {"gold": 1, "spec": {"k": 1}},  # different gold
            {"gold": 0, "spec": {"k": 2}},  # different specific
            {"gold": 0, "spec": {"k": 1}},  # repeat of the first
        ],
        prompt_function=with_specific,
        must_remove_duplicate_docs=True,
    )
    assert [doc.id for doc in task.eval_docs()] == ["0", "1", "2"]


def test_dedupe_treats_equal_dicts_as_equal_content(tmp_path: Path) -> None:
    def with_specific(row: Row, task_name: str) -> Doc:
        spec = {"a": 1, "b": 2} if row["first"] else {"b": 2, "a": 1}
        return Doc(query="q", choices=["a"], gold_index=0, specific=spec)

    task = make_task(
        tmp_path,
        [{"first": True}, {"first": False}],
        prompt_function=with_specific,
        must_remove_duplicate_docs=True,
    )
    assert [doc.id for doc in task.eval_docs()] == ["0"]


# --- errors -------------------------------------------------------------------------------------


def test_prompt_function_exception_names_task_split_row_and_keeps_the_cause(
    tmp_path: Path,
) -> None:
    def fragile(row: Row, task_name: str) -> Doc:
        return Doc(query=row["q"], choices=["a", "b"], gold_index=int(row["gold"]))

    task = make_task(
        tmp_path,
        [
            {"q": "fine", "gold": "0"},
            {"q": "fine too", "gold": "1"},
            {"q": "this row has a bad gold", "gold": "B"},
        ],
        prompt_function=fragile,
    )
    with pytest.raises(PromptFunctionError) as info:
        task.get_docs()
    message = str(info.value)
    assert "'the_task'" in message
    assert "'validation'" in message
    assert "row 2" in message
    assert "this row has a bad gold" in message  # the row preview
    assert "ValueError" in message
    assert "fragile" in message
    assert "__index" not in message  # the preview shows the data, not runtime keys
    assert isinstance(info.value.__cause__, ValueError)
    assert info.value.__cause__.__traceback__ is not None


def test_prompt_function_error_in_the_few_shot_pass_names_the_pool_split(
    tmp_path: Path,
) -> None:
    def pool_fails(row: Row, task_name: str) -> Doc:
        if row["__few_shots"]:
            raise ValueError("cannot format example")
        return Doc(query=row["q"], choices=["a"], gold_index=0)

    task = make_task(tmp_path, rows(2), rows(3, "t"), prompt_function=pool_fails, num_fewshots=1)
    with pytest.raises(PromptFunctionError) as info:
        task.get_docs()
    message = str(info.value)
    assert "'train'" in message
    assert "row 0" in message
    assert "cannot format example" in message
    assert isinstance(info.value.__cause__, ValueError)


def test_row_preview_is_short(tmp_path: Path) -> None:
    def boom(row: Row, task_name: str) -> Doc:
        raise RuntimeError("boom")

    task = make_task(tmp_path, [{"q": "x" * 5000}], prompt_function=boom)
    with pytest.raises(PromptFunctionError) as info:
        task.eval_docs()
    assert len(str(info.value)) < 1000


@pytest.mark.parametrize(
    ("returned", "type_name"),
    [
        ({"query": "q"}, "builtins.dict"),
        ("just a string", "builtins.str"),
        ([Doc("q", ["a"], 0)], "builtins.list"),
    ],
)
def test_non_doc_return_value_names_its_type(tmp_path: Path, returned: Any, type_name: str) -> None:
    def bad(row: Row, task_name: str) -> Any:
        return returned

    task = make_task(tmp_path, rows(2), prompt_function=bad)
    with pytest.raises(PromptFunctionError) as info:
        task.eval_docs()
    message = str(info.value)
    assert "'the_task'" in message
    assert "'validation'" in message
    assert "row 0" in message
    assert type_name in message
    assert "not a Doc (or None to drop the row)" in message


def test_lookalike_doc_class_is_rejected(tmp_path: Path) -> None:
    class Doc:  # e.g. lighteval's own Doc, imported by mistake
        def __init__(self, query: str) -> None:
            self.query = query

    task = make_task(tmp_path, rows(1), prompt_function=lambda row, name: Doc(row["q"]))
    with pytest.raises(PromptFunctionError, match=r"\.Doc, not a Doc"):
        task.eval_docs()


def test_prompt_function_receives_the_task_name(tmp_path: Path) -> None:
    names: list[str] = []

    def record(row: Row, task_name: str) -> Doc:
        names.append(task_name)
        return Doc(query=row["q"], choices=["a"], gold_index=0)

    make_task(tmp_path, rows(2), prompt_function=record, num_fewshots=0).get_docs()
    assert names == ["the_task", "the_task"]


def test_no_docs_left_is_an_error(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(3), prompt_function=lambda row, name: None)
    with pytest.raises(EvalTaskError) as info:
        task.get_docs()
    message = str(info.value)
    assert "'the_task'" in message
    assert "no documents" in message
    assert "validation" in message


def test_no_docs_left_after_hf_filter_is_an_error(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(3), hf_filter=lambda row: False)
    with pytest.raises(EvalTaskError, match="'the_task'"):
        task.get_docs()


def test_empty_split_file_is_an_error_at_get_docs(tmp_path: Path) -> None:
    task = make_task(tmp_path, [])
    with pytest.raises(EvalTaskError, match="no documents"):
        task.get_docs()


def test_hf_filter_exception_names_task_and_split(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(2), hf_filter=lambda row: row["missing"])
    with pytest.raises(DatasetError) as info:
        task.eval_docs()
    message = str(info.value)
    assert "'the_task'" in message
    assert "'validation'" in message
    assert "KeyError" in message
    assert isinstance(info.value.__cause__, KeyError)


def test_global_random_is_seeded_as_lighteval_seeds_it_then_restored(tmp_path: Path) -> None:
    """Eval rows, then the few-shot split, in one stream seeded with 1234 (prompt step 3)."""
    import random

    def gpqa_like(row: Row, task_name: str) -> Doc:
        gold = random.randint(0, 3)
        return Doc(query=row["q"], choices=["a", "b", "c", "d"], gold_index=gold)

    random.seed(1234)
    expected = [random.randint(0, 3) for _ in range(6)]
    random.seed(7)
    before = random.getstate()
    task = make_task(tmp_path, rows(4), rows(2, "t"), prompt_function=gpqa_like, num_fewshots=1)
    docs = task.get_docs()
    assert random.getstate() == before
    assert [doc.gold_index for doc in task.eval_docs()] == expected[:4]
    assert [doc.gold_index for doc in task.fewshot_docs()] == expected[4:]
    assert [
        doc.gold_index
        for doc in make_task(
            tmp_path, rows(4), rows(2, "t"), prompt_function=gpqa_like, num_fewshots=1
        ).get_docs()
    ] == [d.gold_index for d in docs]


def test_numpy_random_is_seeded_too_when_the_prompt_function_uses_it(tmp_path: Path) -> None:
    numpy = pytest.importorskip("numpy")

    def draws(row: Row, task_name: str) -> Doc:
        return Doc(query=f"{row['q']} {numpy.random.randint(0, 1000)}", choices=["a"], gold_index=0)

    numpy.random.seed(1234)
    expected = [f"q{i} {numpy.random.randint(0, 1000)}" for i in range(3)]
    numpy.random.seed(3)
    state = numpy.random.get_state()[1].copy()
    assert [
        doc.query for doc in make_task(tmp_path, rows(3), prompt_function=draws).eval_docs()
    ] == expected
    assert (numpy.random.get_state()[1] == state).all()


def test_get_docs_returns_docs_the_caller_may_edit(tmp_path: Path) -> None:
    task = make_task(tmp_path, rows(3), rows(3, "t"), num_fewshots=2, few_shots_select="sequential")
    first = task.get_docs()
    first[0].choices.append(" maybe")
    first[0].fewshot_samples[0].query = "edited"
    first[0].fewshot_samples.clear()
    second = task.get_docs()
    assert second[0].choices == [" yes", " no"]
    assert [example.query for example in second[0].fewshot_samples] == ["t0", "t1"]


def test_an_uncopyable_prompt_function_is_never_copied(tmp_path: Path) -> None:
    import threading

    class Prompter:
        def __init__(self) -> None:
            self.lock = threading.Lock()

        def __call__(self, row: Row, task_name: str) -> Doc:
            with self.lock:
                return Doc(query=row["q"], choices=["a"], gold_index=0)

        def method(self, row: Row, task_name: str) -> Doc:
            return self(row, task_name)

    prompter = Prompter()
    for function in (prompter, prompter.method):
        config = TaskConfig(
            name="t",
            prompt_function=function,
            hf_repo="org/t",
            hf_subset="default",
            metrics=["acc"],
        )
        write_jsonl(tmp_path / "data/org/t/default/validation.jsonl", rows(2))
        task = Task(config, data_dir=tmp_path / "data", request=None)
        assert len(task.get_docs()) == 2
        from pytest_evaltasks.engine.task_string import TaskRequest

        shots = Task(config, data_dir=tmp_path / "data", request=TaskRequest("t", 1))
        assert shots.config.prompt_function is function
        assert shots.config is not config and config.num_fewshots == 0
