"""The task-string language (prompt step 1): forms, parameters, files, errors.

The steps are those of docs/differences-from-lighteval.md."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from pytest_evaltasks import parse_task_string
from pytest_evaltasks.engine.task_string import TaskRequest, parse_label
from pytest_evaltasks.errors import EvalTaskError, TaskStringError


def triples(spec: str) -> list[tuple[str, int, dict[str, object]]]:
    """(name, shots, params) of every parsed request, in order."""
    return [(r.name, r.num_fewshots, r.params_dict) for r in parse_task_string(spec)]


# --- accepted forms --------------------------------------------------------------------------


def test_bare_name_is_zero_shot() -> None:
    assert triples("gsm8k") == [("gsm8k", 0, {})]


def test_name_with_count() -> None:
    assert triples("gsm8k|5") == [("gsm8k", 5, {})]


def test_family_member_name_keeps_colon() -> None:
    assert triples("mmlu:anatomy|3") == [("mmlu:anatomy", 3, {})]


def test_comma_separated_list_with_whitespace_around_items() -> None:
    assert triples("  gsm8k|5 ,  arc:easy  , mmlu|0 ") == [
        ("gsm8k", 5, {}),
        ("arc:easy", 0, {}),
        ("mmlu", 0, {}),
    ]


def test_metric_parameters_are_python_literals_in_order() -> None:
    requests = parse_task_string("t@k=5@name='x'@flags=[1]@on=True@ratio=0.5|2")
    assert len(requests) == 1
    request = requests[0]
    assert request.name == "t"
    assert request.num_fewshots == 2
    assert request.metric_params == (
        ("k", 5),
        ("name", "x"),
        ("flags", [1]),
        ("on", True),
        ("ratio", 0.5),
    )
    assert list(request.params_dict) == ["k", "name", "flags", "on", "ratio"]


def test_metric_parameters_without_count() -> None:
    assert triples("t@k=1") == [("t", 0, {"k": 1})]


def test_deprecated_suite_form_warns_and_ignores_suite() -> None:
    with pytest.warns(DeprecationWarning, match="deprecated") as record:
        result = triples("lighteval|gsm8k|5")
    assert result == [("gsm8k", 5, {})]
    message = str(record[0].message)
    assert "lighteval" in message  # the ignored suite is named
    assert "gsm8k|5" in message  # and the replacement form is shown


def test_two_part_form_does_not_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_task_string("gsm8k|5,arc")


# --- order and duplicates --------------------------------------------------------------------


def test_order_is_the_order_written() -> None:
    spec = "z|0,a|0,m|0,b|0,y|0,c|0"
    assert [r.name for r in parse_task_string(spec)] == ["z", "a", "m", "b", "y", "c"]


def test_duplicates_dropped_keeping_first_occurrence() -> None:
    spec = "b|1, a|0, b|1 ,c|2,a|0,b|1"
    assert triples(spec) == [("b", 1, {}), ("a", 0, {}), ("c", 2, {})]


def test_same_task_with_different_counts_or_params_is_not_a_duplicate() -> None:
    spec = "t|0,t|5,t@k=1|5,t@k=2|5,t@k=1|5,t|0"
    assert triples(spec) == [
        ("t", 0, {}),
        ("t", 5, {}),
        ("t", 5, {"k": 1}),
        ("t", 5, {"k": 2}),
    ]


@pytest.mark.parametrize("spec", ["t|0,t", "t,t|0"])
def test_a_bare_name_and_zero_shots_are_two_requests_until_resolved(spec: str) -> None:
    """For lm-eval a bare name means the YAML's own shot count: in either order the list keeps
    both requests, and only the registry, knowing the default, may find them the same."""
    requests = parse_task_string(spec)
    assert sorted(r.default_shots for r in requests) == [False, True]
    assert len({r.key for r in requests}) == 2
    assert len(parse_task_string(spec + ",t,t|0")) == 2


def test_list_valued_parameters_deduplicate() -> None:
    """Parameters are unhashable lists here: de-duplication must still work."""
    assert triples("t@k=[1]|1,t@k=[1]|1") == [("t", 1, {"k": [1]})]


def test_order_is_stable_across_calls() -> None:
    spec = ",".join(f"task{i}|{i % 3}" for i in range(40))
    first = parse_task_string(spec)
    assert all(parse_task_string(spec) == first for _ in range(5))
    assert [r.name for r in first] == [f"task{i}" for i in range(40)]


# --- task files ------------------------------------------------------------------------------


def test_file_of_task_strings_ignores_blank_lines_and_comments(tmp_path) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text(
        "# my evaluation suite\n"
        "gsm8k|5\n"
        "\n"
        "   \n"
        "  # an indented comment\n"
        "arc:easy|0\n"
        "mmlu@k=2|1, hellaswag\n"
        "gsm8k|5\n",
        encoding="utf-8",
    )
    assert triples(str(path)) == [
        ("gsm8k", 5, {}),
        ("arc:easy", 0, {}),
        ("mmlu", 1, {"k": 2}),
        ("hellaswag", 0, {}),
    ]


def test_file_path_with_surrounding_whitespace_is_still_a_file(tmp_path) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text("gsm8k|2\n", encoding="utf-8")
    assert triples(f"  {path}  ") == [("gsm8k", 2, {})]


def test_not_a_file_is_a_task_list(tmp_path) -> None:
    """A string that is not the path of an existing file is parsed as task names."""
    missing = tmp_path / "nothing_here"
    assert triples(missing.name) == [("nothing_here", 0, {})]


def test_file_path_containing_a_comma_is_read_as_a_file(tmp_path) -> None:
    path = tmp_path / "suite,v2.txt"
    path.write_text("gsm8k|5\n", encoding="utf-8")
    assert triples(str(path)) == [("gsm8k", 5, {})]


def test_errors_in_a_file_name_the_item(tmp_path) -> None:
    path = tmp_path / "tasks.txt"
    path.write_text("gsm8k|5\narc|many\n", encoding="utf-8")
    with pytest.raises(TaskStringError, match=r"arc\|many"):
        parse_task_string(str(path))


# --- errors ----------------------------------------------------------------------------------

ACCEPTED = "accepted forms"


@pytest.mark.parametrize(
    ("spec", "item", "what"),
    [
        ("gsm8k|five", "gsm8k|five", "not an integer"),
        ("gsm8k|2.5", "gsm8k|2.5", "not an integer"),
        ("gsm8k|", "gsm8k|", "not an integer"),
        ("arc|0,gsm8k|-1", "gsm8k|-1", "negative"),
        ("|3", "|3", "empty name"),
        ("@k=1|3", "@k=1|3", "empty name"),
        ("a|b|3|4", "a|b|3|4", "more than two '|'"),
        ("t@k|1", "t@k|1", "key=value"),
        ("t@=5|1", "t@=5|1", "key=value"),
        ("t@k=foo bar|1", "t@k=foo bar|1", "not a Python literal"),
        ("t@k=|1", "t@k=|1", "not a Python literal"),
        ("t@k=[1|1", "t@k=[1|1", "not a Python literal"),
    ],
)
def test_syntax_errors_name_the_item_and_show_accepted_forms(
    spec: str, item: str, what: str
) -> None:
    with pytest.raises(TaskStringError) as info:
        parse_task_string(spec)
    message = str(info.value)
    assert repr(item) in message
    assert what in message
    assert ACCEPTED in message
    assert "task|N" in message


def test_non_integer_count_error_names_the_count() -> None:
    with pytest.raises(TaskStringError, match=r"few-shot count 'five'"):
        parse_task_string("gsm8k|five")


def test_negative_count_error_names_the_value() -> None:
    with pytest.raises(TaskStringError, match=r"few-shot count -3 is negative"):
        parse_task_string("gsm8k|-3")


def test_unparseable_value_error_names_parameter_and_value() -> None:
    with pytest.raises(TaskStringError) as info:
        parse_task_string("t@metric=exact match|0")
    message = str(info.value)
    assert "'metric'" in message
    assert "'exact match'" in message


def test_empty_item_in_a_list_is_an_error() -> None:
    with pytest.raises(TaskStringError, match="empty name"):
        parse_task_string("gsm8k,,arc")


def test_task_string_errors_are_evaltask_and_value_errors() -> None:
    with pytest.raises(EvalTaskError):
        parse_task_string("x|y")
    with pytest.raises(ValueError):
        parse_task_string("x|y")


def test_request_key_identifies_name_count_and_params() -> None:
    assert TaskRequest("t", 1).key == TaskRequest("t", 1).key
    assert TaskRequest("t", 1).key != TaskRequest("t", 2).key
    assert TaskRequest("t", 1, (("k", 1),)).key != TaskRequest("t", 1).key


# --- values with separators, comments, likely mistakes ------------------------------------------


@pytest.mark.parametrize(
    ("spec", "params", "shots"),
    [
        ("gen@k=[1,2]|0", (("k", [1, 2]),), 0),
        ("gen@sep='a|b'|3", (("sep", "a|b"),), 3),
        ("gen@pair=(1, 'x,y')@n=2|1", (("pair", (1, "x,y")), ("n", 2)), 1),
        ("gen@at='a@b'|2", (("at", "a@b"),), 2),
    ],
)
def test_parameter_values_may_hold_separators(
    spec: str, params: tuple[tuple[str, object], ...], shots: int
) -> None:
    (request,) = parse_task_string(spec)
    assert (request.name, request.metric_params, request.num_fewshots) == ("gen", params, shots)
    assert parse_label(request.label) == TaskRequest("gen", shots, params, request.label)


def test_a_list_file_allows_inline_comments(tmp_path: Path) -> None:
    listing = tmp_path / "ci_tasks.txt"
    listing.write_text("# all of them\nmmlu|5  # the main one\ngsm8k|0 # and\n", encoding="utf-8")
    assert [(r.name, r.num_fewshots) for r in parse_task_string(str(listing))] == [
        ("mmlu", 5),
        ("gsm8k", 0),
    ]


def test_a_mistyped_list_file_is_no_such_file(tmp_path: Path) -> None:
    with pytest.raises(TaskStringError, match=r"no such task-list file: 'tasks/ci_task\.txt'"):
        parse_task_string("tasks/ci_task.txt")


@pytest.mark.parametrize(
    ("spec", "meant"),
    [("mmlu:anatomy|5|0", "'mmlu:anatomy|5'"), ("lighteval|mmlu:anatomy|5|0", "'mmlu:anatomy|5'")],
)
def test_older_lighteval_forms_say_what_was_meant(spec: str, meant: str) -> None:
    with pytest.raises(TaskStringError, match=f"did you mean {meant}"):
        parse_task_string(spec)
