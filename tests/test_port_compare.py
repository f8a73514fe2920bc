"""The port comparison's decisions (`snapshot/port_compare`), in-process: how docs are paired and
what kind each difference is put in."""

from __future__ import annotations

import pytest

from pytest_evaltasks.engine.ports import PortDoc, read_ports, split_port_specs
from pytest_evaltasks.errors import EvalTaskError
from pytest_evaltasks.snapshot.port_compare import compare


def doc(index: int, prompt: str | None = None, **fields: object) -> PortDoc:
    base: dict[str, object] = {
        "row": f"test/{index}",
        "prompt": prompt if prompt is not None else f"Question: q{index}?\nAnswer:",
        "choices": (" yes", " no"),
        "target": " yes",
        "fewshot_rows": ("train/0",),
    }
    base.update(fields)
    return PortDoc(**base)  # type: ignore[arg-type]


def kinds(a: list[PortDoc], b: list[PortDoc], by_key: bool = False) -> dict[str, list[str]]:
    return {d.kind: d.rows for d in compare(a, b, by_key).differences}


def test_identical_sides_have_no_difference() -> None:
    docs = [doc(i) for i in range(5)]
    assert compare(docs, list(docs)).identical


@pytest.mark.parametrize(
    ("edit", "kind"),
    [
        (lambda p: p.replace("\n", "\n\n"), "delimiter or whitespace"),
        (lambda p: p.replace("?", " ?"), "delimiter or whitespace"),
        (lambda p: p.replace("Answer:", "Answer:\u200b"), "delimiter or whitespace"),
        (lambda p: p.replace("Answer", "A"), "instruction"),
        (lambda p: "Answer the question.\n" + p, "instruction"),
    ],
)
def test_a_prompt_difference_is_a_delimiter_or_an_instruction(edit, kind) -> None:  # type: ignore[no-untyped-def]
    a = [doc(i) for i in range(3)]
    b = [doc(i, edit(d.prompt)) for i, d in enumerate(a)]
    assert kinds(a, b) == {kind: ["test/0", "test/1", "test/2"]}


def test_each_field_has_its_kind() -> None:
    a = [doc(0), doc(1), doc(2, generates=True), doc(3, generates=True), doc(4), doc(5)]
    b = [
        doc(0, choices=(" A", " B")),
        doc(1, target=" no"),
        doc(2, stops=("\n",), generates=True),
        doc(3, max_tokens=5, generates=True),
        doc(4, choices=("yes", "no")),
        doc(5, fewshot_rows=("train/3",), prompt="Other example\n\nQuestion: q5?\nAnswer:"),
    ]
    assert kinds(a, b) == {
        "few-shot selection": ["test/5"],
        "delimiter or whitespace": ["test/4"],
        "choice labels": ["test/0"],
        "target form": ["test/1"],
        "stop sequences": ["test/2"],
        "generation length": ["test/3"],
    }  # the words of other few-shot examples are the selection's, not an instruction
    scored = [doc(0, stops=("\n",), max_tokens=1)]
    assert compare(scored, [doc(0)]).identical  # no generation: nothing ends one
    (generated,) = compare(scored, [doc(0, generates=True, max_tokens=8)]).differences
    assert generated.kind == "generation length"
    assert (
        generated.example
        == "test/0: a scores the choices (no generation); b generates up to 8 tokens"
    )


def test_coverage_and_order_are_found_from_the_rows() -> None:
    a = [doc(i) for i in range(4)]
    b = [doc(1), doc(0), doc(2), doc(7)]
    found = compare(a, b)
    assert (found.a_docs, found.b_docs, found.aligned) == (4, 4, 3)
    assert kinds(a, b) == {"coverage": ["a:test/3", "b:test/7"], "doc order": ["test/0", "test/1"]}


def test_docs_are_paired_by_key_when_one_is_named() -> None:
    a = [doc(i, key=f"id{i}") for i in range(3)]
    b = [doc(9 - i, prompt=d.prompt, key=f"id{i}") for i, d in enumerate(a)]
    assert compare(a, b, by_key=True).identical
    assert "coverage" in kinds(a, b)  # by row, nothing pairs


def test_the_example_shows_the_changed_characters_visibly() -> None:
    a = [doc(0, "Q: x\nA: Madrid")]
    b = [doc(0, "Q: x\nA:  Madrid")]
    (difference,) = compare(a, b).differences
    assert difference.example == 'test/0: a "Q: x\\nA: []Madrid"; b "Q: x\\nA: [ ]Madrid"'
    zero = compare(a, [doc(0, "Q: x\nA: \u200bMadrid")]).differences[0]
    assert "\u27e8U+200B\u27e9" in zero.example


def test_port_specs_are_taken_out_of_task_strings() -> None:
    assert split_port_specs(["mmlu|5,port:a", "ports", "x@k=[1, 2]|0"]) == (
        ["mmlu|5", "x@k=[1, 2]|0"],
        ["a", "ports"],
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[[port]]\nname = 'x'\na = 'a'\n", "port 1 (x), b: expected a task string"),
        ("[[port]]\nname = 'x y'\na = 'a'\nb = 'b'\n", "`name` must be a word"),
        ("[[port]]\nname = 'x'\na = 'a'\nb = 'b'\nkeys = 'id'\n", "unknown field 'keys'"),
        ("[[port]]\nname = 'x'\na='a'\nb='b'\n[[port]]\nname = 'x'\na='a'\nb='b'\n", "two ports"),
        ("port = 3\n", "expected only [[port]] tables"),
        ("[[port]\n", "not valid TOML"),
    ],
)
def test_a_bad_declaration_is_refused_naming_what_to_fix(tmp_path, text, says) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "ports.toml").write_text(text, encoding="utf-8")
    with pytest.raises(EvalTaskError, match=r"ports\.toml") as raised:
        read_ports(tmp_path)
    assert says in str(raised.value)


def test_with_other_examples_the_docs_own_part_is_still_compared() -> None:
    a = [doc(0, "Ex one\n\nQuestion: q0?\nAnswer:", fewshot_rows=("train/1",))]
    b = [doc(0, "Ex two\n\nQuestion:  q0?\nAnswer:", fewshot_rows=("train/2",))]
    found = {d.kind: d.example for d in compare(a, b).differences}
    assert set(found) == {"few-shot selection", "delimiter or whitespace"}
    assert found["delimiter or whitespace"] == (
        'test/0: a "Question: []q0?\\nAnswer:"; b "Question: [ ]q0?\\nAnswer:"'
    )


def test_a_word_change_and_a_delimiter_change_in_one_prompt_are_both_named() -> None:
    a = [doc(0, "Question: What is x?\nAnswer:")]
    b = [doc(0, "Q: What is x?\n\nAnswer:")]
    found = {d.kind: d.example for d in compare(a, b).differences}
    assert found == {
        "delimiter or whitespace": (
            'test/0: a " What is x?\\n[]Answer:"; b " What is x?\\n[\\n]Answer:"'
        ),
        "instruction": 'test/0: a "Q[uestion]: What is x?"; b "Q[]: What is x?"',
    }


def test_under_a_chat_template_the_templated_texts_are_compared() -> None:
    a = [doc(0, "Q?", chat="<user>Q?</user>"), doc(1, "Q?", chat="<user>Q?</user>")]
    b = [doc(0, "Q?", chat="<user>Q? </user>"), doc(1, "<user>Q!</user>", chat="<user>Q!</user>")]
    found = {d.kind: d.rows for d in compare(a, b).differences}
    assert found == {"chat messages": ["test/0"], "delimiter or whitespace": ["test/1"]}
