"""Prompt rendering (prompt step 6): plain text, chat messages, chat templates.

The steps are those of docs/differences-from-lighteval.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_evaltasks import Doc, Task, TaskConfig, render_chat, render_messages, render_plain
from pytest_evaltasks.engine.prompts import extract_query

INSTRUCTION = "Answer the following questions.\n\n"


def example(question: str, answer: str, instruction: str | None = None) -> Doc:
    query = f"Question: {question}\nAnswer:"
    if instruction is not None:
        query = instruction + query
    return Doc(query=query, choices=[f" {answer}", " wrong"], gold_index=0, instruction=instruction)


def doc_with_examples(instruction: str | None = None) -> Doc:
    doc = example("3+3?", "6", instruction)
    doc.fewshot_samples = [example("1+1?", "2", instruction), example("2+2?", "4", instruction)]
    return doc


# --- extract_query ---------------------------------------------------------------------------


def test_extract_query_strips_the_instruction_and_surrounding_whitespace() -> None:
    assert extract_query("Do this.\n\n  Q: x \n", "Do this.") == "Q: x"


def test_extract_query_without_instruction_is_unchanged() -> None:
    assert extract_query("  Q: x \n", None) == "  Q: x \n"


def test_extract_query_when_query_does_not_start_with_instruction_is_unchanged() -> None:
    assert extract_query("  Q: x \n", "Other instruction") == "  Q: x \n"


def test_extract_query_with_empty_instruction_strips() -> None:
    """An empty instruction counts as set, and every query starts with it."""
    assert extract_query("  Q: x \n", "") == "Q: x"


# --- plain text ------------------------------------------------------------------------------


def test_plain_zero_shot_is_the_query() -> None:
    assert render_plain(example("3+3?", "6")) == "Question: 3+3?\nAnswer:"


def test_plain_with_examples_strips_gold_and_joins_with_blank_lines() -> None:
    assert render_plain(doc_with_examples()) == (
        "Question: 1+1?\nAnswer: 2\n\nQuestion: 2+2?\nAnswer: 4\n\nQuestion: 3+3?\nAnswer:"
    )


def test_plain_with_system_prompt_and_instruction_ending_in_blank_line() -> None:
    # instruction "...\n\n" + join "\n\n" = four newlines in a row
    assert render_plain(doc_with_examples(INSTRUCTION), system_prompt="You are precise.") == (
        "You are precise.\n\n"
        "Answer the following questions.\n\n\n\n"
        "Question: 1+1?\nAnswer: 2\n\n"
        "Question: 2+2?\nAnswer: 4\n\n"
        "Question: 3+3?\nAnswer:"
    )


def test_plain_instruction_zero_shot() -> None:
    assert render_plain(example("3+3?", "6", INSTRUCTION)) == (
        "Answer the following questions.\n\n\n\nQuestion: 3+3?\nAnswer:"
    )


def test_plain_gold_is_stripped_on_both_sides() -> None:
    doc = example("q?", "unused")
    doc.fewshot_samples = [Doc(query="Ex:", choices=["  spaced out \n"], gold_index=0)]
    assert render_plain(doc) == "Ex: spaced out\n\nQuestion: q?\nAnswer:"


def test_plain_multiple_golds_use_the_first() -> None:
    doc = example("q?", "unused")
    doc.fewshot_samples = [Doc(query="Ex:", choices=[" a", " b", " c"], gold_index=[2, 0])]
    assert render_plain(doc) == "Ex: c\n\nQuestion: q?\nAnswer:"


def test_plain_choice_that_is_a_list_uses_its_first_item() -> None:
    doc = example("Capital of France?", "unused")
    doc.fewshot_samples = [
        Doc(query="Capital of Italy?", choices=[["Rome", "rome"], "Paris"], gold_index=0)  # type: ignore[list-item]
    ]
    assert render_plain(doc) == "Capital of Italy? Rome\n\nQuestion: Capital of France?\nAnswer:"


def test_plain_example_query_not_starting_with_its_instruction_is_kept_whole() -> None:
    doc = example("q?", "unused")
    doc.fewshot_samples = [
        Doc(query=" Ex query ", choices=[" g"], gold_index=0, instruction="not a prefix")
    ]
    assert render_plain(doc) == " Ex query  g\n\nQuestion: q?\nAnswer:"


def test_plain_empty_system_prompt_is_still_a_block() -> None:
    assert render_plain(example("q?", "a"), system_prompt="") == "\n\nQuestion: q?\nAnswer:"


# --- chat messages ---------------------------------------------------------------------------


def test_messages_zero_shot() -> None:
    assert render_messages(example("3+3?", "6")) == [
        {"role": "user", "content": "Question: 3+3?\nAnswer:"}
    ]


def test_messages_with_examples_keep_gold_unstripped() -> None:
    assert render_messages(doc_with_examples()) == [
        {"role": "user", "content": "Question: 1+1?\nAnswer:"},
        {"role": "assistant", "content": " 2"},
        {"role": "user", "content": "Question: 2+2?\nAnswer:"},
        {"role": "assistant", "content": " 4"},
        {"role": "user", "content": "Question: 3+3?\nAnswer:"},
    ]


def test_messages_instruction_goes_on_the_first_example_only() -> None:
    assert render_messages(doc_with_examples(INSTRUCTION), system_prompt="Be brief.") == [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": "Answer the following questions.\n\nQuestion: 1+1?\nAnswer:",
        },
        {"role": "assistant", "content": " 2"},
        {"role": "user", "content": "Question: 2+2?\nAnswer:"},
        {"role": "assistant", "content": " 4"},
        {"role": "user", "content": "Question: 3+3?\nAnswer:"},
    ]


def test_messages_instruction_goes_on_the_query_without_examples() -> None:
    assert render_messages(example("3+3?", "6", INSTRUCTION)) == [
        {"role": "user", "content": "Answer the following questions.\n\nQuestion: 3+3?\nAnswer:"}
    ]


def test_messages_instruction_is_concatenated_without_separator() -> None:
    doc = Doc(query="Pick one.Q?", choices=["a"], gold_index=0, instruction="Pick one.")
    doc.fewshot_samples = [
        Doc(query="Pick one. Ex?", choices=[" x "], gold_index=0, instruction="Pick one.")
    ]
    assert render_messages(doc) == [
        {"role": "user", "content": "Pick one.Ex?"},
        {"role": "assistant", "content": " x "},
        {"role": "user", "content": "Q?"},
    ]


def test_messages_multiple_golds_and_list_choice() -> None:
    doc = Doc(query="Q?", choices=["a"], gold_index=0)
    doc.fewshot_samples = [
        Doc(query="E1?", choices=["a", " b "], gold_index=[1, 0]),
        Doc(query="E2?", choices=[[" x ", "y"], "z"], gold_index=0),  # type: ignore[list-item]
    ]
    assert render_messages(doc) == [
        {"role": "user", "content": "E1?"},
        {"role": "assistant", "content": " b "},
        {"role": "user", "content": "E2?"},
        {"role": "assistant", "content": " x "},
        {"role": "user", "content": "Q?"},
    ]


def test_messages_empty_instruction_counts_as_set() -> None:
    doc = Doc(query=" Q? ", choices=["a"], gold_index=0, instruction="")
    assert render_messages(doc) == [{"role": "user", "content": "Q?"}]


def test_rendering_does_not_modify_the_doc() -> None:
    doc = doc_with_examples(INSTRUCTION)
    before = (doc.query, doc.instruction, [ex.query for ex in doc.fewshot_samples])
    render_plain(doc, system_prompt="s")
    render_messages(doc, system_prompt="s")
    assert (doc.query, doc.instruction, [ex.query for ex in doc.fewshot_samples]) == before


# --- chat template ---------------------------------------------------------------------------


def test_render_chat_with_bundled_chatml() -> None:
    assert render_chat(doc_with_examples(INSTRUCTION), "chatml", system_prompt="Be brief.") == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nAnswer the following questions.\n\nQuestion: 1+1?\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\n 2<|im_end|>\n"
        "<|im_start|>user\nQuestion: 2+2?\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\n 4<|im_end|>\n"
        "<|im_start|>user\nQuestion: 3+3?\nAnswer:<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_render_chat_with_a_jinja_file(tmp_path: Path) -> None:
    template = tmp_path / "mini.jinja"
    template.write_text(
        "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}",
        encoding="utf-8",
    )
    assert render_chat(doc_with_examples(), template) == (
        "[user]Question: 1+1?\nAnswer:\n"
        "[assistant] 2\n"
        "[user]Question: 2+2?\nAnswer:\n"
        "[assistant] 4\n"
        "[user]Question: 3+3?\nAnswer:\n"
        "[assistant]"
    )


# --- end to end through a task --------------------------------------------------------------


def test_task_docs_render_with_their_examples(tmp_path: Path) -> None:
    data = tmp_path / "data"
    base = data / "org/r/default"
    base.mkdir(parents=True)
    (base / "test.jsonl").write_text(
        json.dumps({"question": "Capital of Peru?", "answer": "Lima"}) + "\n", encoding="utf-8"
    )
    (base / "train.jsonl").write_text(
        "".join(
            json.dumps({"question": q, "answer": a}) + "\n"
            for q, a in [("Capital of Chile?", "Santiago"), ("Capital of Cuba?", "Havana")]
        ),
        encoding="utf-8",
    )

    def prompt(row: dict[str, str], task_name: str) -> Doc:
        return Doc(
            query=f"{INSTRUCTION}Q: {row['question']}\nA:",
            choices=[f" {row['answer']}"],
            gold_index=0,
            instruction=INSTRUCTION,
        )

    config = TaskConfig(
        name="capitals",
        prompt_function=prompt,
        hf_repo="org/r",
        hf_subset="default",
        metrics=[],
        evaluation_splits=["test"],
        few_shots_select="sequential",
        num_fewshots=2,
    )
    [doc] = Task(config, data_dir=data).get_docs()
    assert render_plain(doc) == (
        "Answer the following questions.\n\n\n\n"
        "Q: Capital of Chile?\nA: Santiago\n\n"
        "Q: Capital of Cuba?\nA: Havana\n\n"
        "Q: Capital of Peru?\nA:"
    )
    assert render_messages(doc)[0] == {
        "role": "user",
        "content": "Answer the following questions.\n\nQ: Capital of Chile?\nA:",
    }
    assert render_messages(doc)[1] == {"role": "assistant", "content": " Santiago"}


@pytest.mark.parametrize("system_prompt", [None, "S"])
def test_instruction_appears_exactly_once_in_messages(system_prompt: str | None) -> None:
    for doc in (doc_with_examples(INSTRUCTION), example("q", "a", INSTRUCTION)):
        text = "".join(m["content"] for m in render_messages(doc, system_prompt=system_prompt))
        assert text.count("Answer the following questions.") == 1
