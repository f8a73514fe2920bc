"""`TaskConfig`: lighteval field names, validation errors, metric names, porting."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks import (
    Doc,
    LightevalTaskConfig,
    Metrics,
    Registry,
    TaskConfig,
    render_messages,
    render_plain,
)
from pytest_evaltasks.errors import EvalTaskError, TaskConfigError


def prompt(row: dict[str, Any], task_name: str) -> Doc:
    return Doc(query=row["q"], choices=row["choices"], gold_index=row["gold"])


def config(**overrides: Any) -> TaskConfig:
    fields: dict[str, Any] = {
        "name": "demo",
        "prompt_function": prompt,
        "hf_repo": "org/demo",
        "hf_subset": "default",
        "metrics": ["acc"],
    }
    fields.update(overrides)
    return TaskConfig(**fields)


# --- defaults and field names ----------------------------------------------------------------


def test_lighteval_name_is_the_same_class() -> None:
    assert LightevalTaskConfig is TaskConfig


def test_defaults_follow_the_spec() -> None:
    c = config()
    assert c.hf_avail_splits == ["train", "validation", "test"]
    assert c.evaluation_splits == ["validation"]
    assert c.few_shots_split is None
    assert c.few_shots_select is None
    assert c.hf_revision is None
    assert c.hf_data_files is None
    assert c.hf_filter is None
    assert c.generation_size is None
    assert c.stop_sequence is None
    assert c.num_samples is None
    assert c.generation_grammar is None
    assert c.must_remove_duplicate_docs is False
    assert c.num_fewshots == 0
    assert c.version == 0
    assert c.original_num_docs == -1
    assert c.effective_num_docs == -1
    assert c.truncate_fewshots is False
    for name in ("solver", "scorer", "sample_fields", "sample_to_fewshot", "filter"):
        assert getattr(c, name) is None


def test_default_lists_are_not_shared_between_configs() -> None:
    a, b = config(), config()
    a.hf_avail_splits.append("extra")
    a.evaluation_splits.append("test")
    assert b.hf_avail_splits == ["train", "validation", "test"]
    assert b.evaluation_splits == ["validation"]


def test_lighteval_porting_fields_are_accepted() -> None:
    c = config(
        solver=["s"],
        scorer="sc",
        sample_fields=lambda r: r,
        sample_to_fewshot=lambda s: s,
        filter=lambda r: True,
        original_num_docs=10,
        effective_num_docs=5,
        truncate_fewshots=True,
    )
    assert c.original_num_docs == 10
    assert c.truncate_fewshots is True


def test_tuples_become_lists() -> None:
    c = config(
        hf_avail_splits=("train", "test"),
        evaluation_splits=("test",),
        stop_sequence=("\n\n", "Question:"),
    )
    assert c.hf_avail_splits == ["train", "test"]
    assert c.evaluation_splits == ["test"]
    assert c.stop_sequence == ["\n\n", "Question:"]


def test_negative_generation_size_is_accepted() -> None:
    assert config(generation_size=-1).generation_size == -1


@pytest.mark.parametrize(
    ("value", "shown", "hint"),
    [
        ("1", "'1'", "not str: write version=1"),
        (1.0, "1.0", "not float: write version=1"),
        ("v2", "'v2'", "not str: write version=2"),
        ("0.1", "'0.1'", "not str: write an int such as version=1"),
        (True, "True", "not bool: write an int such as version=1"),
        (None, "None", "not NoneType: write an int such as version=1"),
    ],
)
def test_a_version_that_is_not_an_int_is_refused_naming_the_task_and_value(
    value: object, shown: str, hint: str
) -> None:
    with pytest.raises(TaskConfigError) as info:
        config(name="capitals", version=value)
    assert str(info.value) == (
        f"task 'capitals': invalid config: field 'version' = {shown}: must be an int (the "
        f"task's version, raised by one with each change of its prompts), {hint}"
    )


def test_every_few_shot_selection_is_accepted() -> None:
    for selection in (
        "balanced",
        "random",
        "sequential",
        "random_sampling_from_train",
        "random_sampling",
    ):
        assert config(few_shots_select=selection).few_shots_select == selection


# --- errors ----------------------------------------------------------------------------------


def test_unknown_field_suggests_the_close_known_one() -> None:
    with pytest.raises(TaskConfigError) as info:
        config(few_shot_split="train")
    message = str(info.value)
    assert "'few_shot_split'" in message
    assert "did you mean few_shots_split?" in message
    assert "'demo'" in message  # the task


def test_all_unknown_fields_are_reported_at_once() -> None:
    with pytest.raises(TaskConfigError) as info:
        config(fewshots_select="random", hf_sbuset="x")
    message = str(info.value)
    assert "'fewshots_select'" in message
    assert "did you mean few_shots_select?" in message
    assert "'hf_sbuset'" in message
    assert "did you mean hf_subset?" in message


def test_unknown_field_without_close_match_has_no_suggestion() -> None:
    with pytest.raises(TaskConfigError) as info:
        config(zzzzqqq=1)
    assert "'zzzzqqq'" in str(info.value)
    assert "did you mean" not in str(info.value)


def test_full_name_is_not_a_config_field() -> None:
    with pytest.raises(TaskConfigError, match="unknown config field 'full_name'"):
        config(full_name="demo|5")


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("num_fewshots", -1, "-1"),
        ("few_shots_select", "balance", "'balance'"),
        ("few_shots_select", "best", "'best'"),
        ("evaluation_splits", "test", "'test'"),
        ("evaluation_splits", [], "[]"),
        ("hf_avail_splits", "train", "'train'"),
        ("generation_size", "ten", "'ten'"),
        ("generation_size", 2.5, "2.5"),
        ("must_remove_duplicate_docs", "yes", "'yes'"),
        ("metrics", "acc", "'acc'"),
        ("prompt_function", "not callable", "'not callable'"),
        ("stop_sequence", "\n", "'\\n'"),
        ("version", "", "''"),
    ],
)
def test_invalid_value_names_task_field_and_value(field: str, value: Any, shown: str) -> None:
    with pytest.raises(TaskConfigError) as info:
        config(name="my_task", **{field: value})
    message = str(info.value)
    assert "'my_task'" in message
    assert f"'{field}" in message
    assert shown in message


def test_unknown_few_shots_select_lists_the_accepted_selections() -> None:
    with pytest.raises(TaskConfigError) as info:
        config(few_shots_select="balance")
    message = str(info.value)
    for selection in ("balanced", "random", "sequential", "random_sampling"):
        assert selection in message


def test_empty_name_is_an_error() -> None:
    with pytest.raises(TaskConfigError, match="'name'"):
        config(name="")


def test_missing_required_fields_are_named() -> None:
    with pytest.raises(TaskConfigError) as info:
        TaskConfig(name="lonely")
    message = str(info.value)
    assert "'lonely'" in message
    for field in ("prompt_function", "hf_repo", "hf_subset", "metrics"):
        assert field in message


def test_invalid_assignment_names_task_field_and_value() -> None:
    c = config(name="assigned")
    with pytest.raises(TaskConfigError) as info:
        c.num_fewshots = -4
    message = str(info.value)
    assert "'assigned'" in message
    assert "num_fewshots" in message
    assert "-4" in message
    assert c.num_fewshots == 0


def test_config_errors_are_evaltask_and_value_errors() -> None:
    with pytest.raises(EvalTaskError):
        config(num_fewshots=-1)
    with pytest.raises(ValueError):
        config(num_fewshots=-1)


# --- source location -------------------------------------------------------------------------


def test_source_file_and_line_point_at_the_creating_line() -> None:
    c = config()  # the line inside `config()` that calls TaskConfig
    assert Path(c.source_file).resolve() == Path(__file__).resolve()
    source = Path(__file__).read_text(encoding="utf-8").splitlines()
    assert "TaskConfig(**fields)" in source[c.source_line - 1]


# --- metric names ----------------------------------------------------------------------------


@dataclasses.dataclass
class MetricWithName:
    metric_name: str


@dataclasses.dataclass
class MetricWithTupleName:
    metric_name: tuple[str, ...]


class NamedMetric:
    name = "named_metric"


class PlainMetric:
    pass


def some_metric_fn(x: Any) -> Any:
    return x


def test_builtin_metrics_record_lighteval_names() -> None:
    c = config(
        metrics=[Metrics.loglikelihood_acc, Metrics.exact_match, Metrics.truthfulqa_mc_metrics]
    )
    assert c.metric_names == ["acc", "em", "truthfulqa_mc1,truthfulqa_mc2"]


def test_parametrised_metric_records_its_parameters() -> None:
    metric = Metrics.exact_match(sample_params={"normalize_gold": some_metric_fn, "strip": True})
    names = config(metrics=[metric]).metric_names
    assert names == ["em:normalize_gold=some_metric_fn&strip=True"]
    assert "0x" not in names[0]


def test_arbitrary_metric_objects_are_accepted_and_named() -> None:
    metrics = [
        object(),
        MetricWithName("my_metric"),
        MetricWithTupleName(("a", "b")),
        NamedMetric(),
        "plain_string_metric",
        PlainMetric(),
        some_metric_fn,
    ]
    c = config(metrics=metrics)
    assert c.metric_names == [
        "<object object>",
        "my_metric",
        "a,b",
        "named_metric",
        "plain_string_metric",
        f"<{__name__}.PlainMetric object>",
        "<function some_metric_fn>",
    ]
    assert all("0x" not in name for name in c.metric_names)


def test_metrics_given_as_tuple_become_a_list() -> None:
    c = config(metrics=(Metrics.loglikelihood_acc,))
    assert c.metrics == [Metrics.loglikelihood_acc]


# --- porting a lighteval task file ------------------------------------------------------------

LIGHTEVAL_STYLE_TASK = '''\
"""A task file as written for lighteval; only the imports changed."""
from pytest_evaltasks import LightevalTaskConfig
from pytest_evaltasks import Doc, SamplingMethod
from pytest_evaltasks import Metrics


def gsm8k_normalizer(text):
    return text.split("####")[-1].strip()


def gsm8k(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\\nAnswer:",
        choices=[f" {line['answer']}"],
        gold_index=0,
    )


def arc(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=f"Question: {line['question']}\\nAnswer:",
        choices=[f" {c}" for c in line["choices"]["text"]],
        gold_index=line["choices"]["label"].index(line["answerKey"]),
        sampling_methods=[SamplingMethod.LOGPROBS],
    )


gsm8k_task = LightevalTaskConfig(
    name="gsm8k",
    prompt_function=gsm8k,
    hf_repo="openai/gsm8k",
    hf_subset="main",
    hf_avail_splits=("train", "test"),
    evaluation_splits=("test",),
    few_shots_split=None,
    few_shots_select="random_sampling_from_train",
    generation_size=-1,
    metrics=[
        Metrics.exact_match(
            sample_params={"normalize_gold": gsm8k_normalizer, "normalize_pred": gsm8k_normalizer}
        )
    ],
    stop_sequence=("Question:",),
    version=1,
)

arc_easy = LightevalTaskConfig(
    name="arc:easy",
    prompt_function=arc,
    hf_repo="allenai/ai2_arc",
    hf_subset="ARC-Easy",
    hf_avail_splits=["train", "validation", "test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select="random_sampling_from_train",
    generation_size=1,
    metrics=[Metrics.loglikelihood_acc],
    stop_sequence=["\\n"],
    version=0,
)

TASKS_TABLE = [gsm8k_task, arc_easy]
'''


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def ported(tmp_path: Path) -> Registry:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "ported.py").write_text(LIGHTEVAL_STYLE_TASK, encoding="utf-8")
    data = tmp_path / "data"
    write_jsonl(
        data / "openai/gsm8k/main/test.jsonl",
        [{"question": "What is 2+2?", "answer": "2+2=4\n#### 4"}],
    )
    write_jsonl(
        data / "openai/gsm8k/main/train.jsonl",
        [{"question": "What is 1+1?", "answer": "1+1=2\n#### 2"}],
    )
    arc_choices = {"text": ["red", "blue"], "label": ["A", "B"]}
    write_jsonl(
        data / "allenai/ai2_arc/ARC-Easy/test.jsonl",
        [{"question": "Sky colour?", "choices": arc_choices, "answerKey": "B"}],
    )
    write_jsonl(
        data / "allenai/ai2_arc/ARC-Easy/train.jsonl",
        [
            {
                "question": "Grass colour?",
                "choices": {"text": ["green", "pink"], "label": ["A", "B"]},
                "answerKey": "A",
            }
        ],
    )
    return Registry(task_dirs=[tasks], data_dir=data)


def test_ported_file_loads_with_lighteval_values(ported: Registry) -> None:
    assert ported.broken == []
    assert ported.names == ["arc:easy", "gsm8k"]
    gsm = ported.configs["gsm8k"]
    assert gsm.hf_avail_splits == ["train", "test"]
    assert gsm.evaluation_splits == ["test"]
    assert gsm.stop_sequence == ["Question:"]
    assert gsm.generation_size == -1
    assert gsm.version == 1
    assert gsm.metric_names == [
        "em:normalize_gold=gsm8k_normalizer&normalize_pred=gsm8k_normalizer"
    ]
    assert ported.configs["arc:easy"].metric_names == ["acc"]


def test_ported_file_renders(ported: Registry) -> None:
    gsm, arc = ported.load("gsm8k|1,arc:easy|1")
    [doc] = gsm.get_docs()
    assert doc.task_name == "gsm8k|1"
    assert doc.generation_size == -1
    assert doc.stop_sequences == ["Question:"]
    assert render_plain(doc) == (
        "Question: What is 1+1?\nAnswer: 1+1=2\n#### 2\n\nQuestion: What is 2+2?\nAnswer:"
    )
    [arc_doc] = arc.get_docs()
    assert render_messages(arc_doc) == [
        {"role": "user", "content": "Question: Grass colour?\nAnswer:"},
        {"role": "assistant", "content": " green"},
        {"role": "user", "content": "Question: Sky colour?\nAnswer:"},
    ]
    assert arc_doc.gold_index == 1


def test_the_pydantic_names_of_the_model_api_work() -> None:
    c = config(name="api", version=2)
    dumped = c.model_dump()
    assert dumped["name"] == "api" and dumped["version"] == 2 and set(dumped) == set(c.model_fields)
    again = TaskConfig.model_validate(dumped)
    assert again == c
    copied = c.model_copy(update={"num_fewshots": 3})
    assert copied.num_fewshots == 3 and c.num_fewshots == 0
    with pytest.raises(TaskConfigError, match=r"'nme'.*did you mean name"):
        TaskConfig.model_validate({**dumped, "nme": "x"})
