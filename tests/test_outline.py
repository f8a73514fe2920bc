"""The outline of an identity (`snapshot/outline`): what a changed digest is explained by."""

from __future__ import annotations

import dataclasses
import functools

from pytest_evaltasks.snapshot import outline
from pytest_evaltasks.snapshot.identity import identity


@dataclasses.dataclass
class Step:
    template: str
    params: dict = dataclasses.field(default_factory=dict)


def make(template: str):
    def solve(state):
        return template.format(**state)

    return solve


def lines_of(value: object) -> tuple[str, ...]:
    return outline.outline(identity(value, None, "value"))


def test_an_object_outlines_its_state_and_a_closure_its_values() -> None:
    lines = lines_of([Step("Q: {q}", {"n": 2}), make("A: {a}")])
    here = Step.__module__
    assert lines == (
        f"[0]: {here}:Step",
        '[0].template: "Q: {q}"',
        "[0].params.n: 2",
        f"[1]: {here}:make.<locals>.solve",
        '[1].template: "A: {a}"',
    )


def test_machinery_and_references_back_up_the_walk_are_left_out() -> None:
    solve = make("x")
    solve.__wrapped__ = solve  # a decorator's reference back to itself
    lines = lines_of(solve)
    assert lines == (f"{Step.__module__}:make.<locals>.solve", 'template: "x"')


def test_a_long_value_is_written_by_its_start_length_and_digest() -> None:
    long, other = "a" * 2000, "a" * 1999 + "b"
    (line,) = lines_of({"t": long})
    assert line.startswith('t: "aaaa') and "(2000 chars, #" in line
    assert lines_of({"t": other}) != (line,)  # the digest tells the two apart


def test_an_outline_is_bounded() -> None:
    lines = outline.outline(identity({f"k{i:03}": i for i in range(500)}, None, "v"), limit=10)
    assert len(lines) == 11 and lines[-1] == "... 490 more lines"


def test_changes_name_the_setting_its_step_and_an_added_or_removed_step_once() -> None:
    old = lines_of([make("Q: {q}"), Step("keep")])
    new = lines_of([make("Question: {q}"), Step("keep"), Step("new", {"n": 1})])
    here = Step.__module__
    assert outline.changes(old, new) == [
        f'[0].template: "Q: {{q}}" -> "Question: {{q}}" (in {here}:make.<locals>.solve)',
        f"[2]: added {here}:Step",
    ]
    assert outline.changes(new, old) == [
        f'[0].template: "Question: {{q}}" -> "Q: {{q}}" (in {here}:make.<locals>.solve)',
        f"[2]: removed {here}:Step",
    ]
    assert outline.changes(old, old) == []


def test_a_value_that_changes_kind_is_named_itself() -> None:
    old = lines_of(make("x"))
    new = lines_of(functools.partial(print, "x"))
    assert outline.changes(old, new)[0].startswith("itself: ")


def test_the_section_reads_back_and_collecting_notes_only_inside() -> None:
    outline.note("0" * 16, identity(Step("ignored"), None, "v"))  # not collecting: dropped
    with outline.collecting() as found:
        outline.note("b" * 16, identity(Step("b"), None, "v"))
        outline.note("a" * 16, identity("plain", None, "v"))
    section = outline.section(found)
    assert section[0] == "#" + "a" * 16 + ' "plain"'
    assert section[1] == "#" + "b" * 16 + f" {Step.__module__}:Step"
    assert outline.read_section(section) == found
