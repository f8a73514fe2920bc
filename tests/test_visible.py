"""Diff lines a reviewer can trust: hidden characters written out, changed characters pointed at."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pytest_evaltasks.snapshot.visible import guide, hidden, marked_diff, visible


def test_invisible_and_format_characters_are_written_as_code_points() -> None:
    text = "A:\u200bB\u00a0C\tD\ufeffE\u202eF\u2028G"
    assert visible(text) == ("A:⟨U+200B⟩B⟨U+00A0⟩C⟨U+0009⟩D⟨U+FEFF⟩E⟨U+202E⟩F⟨U+2028⟩G")


def test_plain_text_and_visible_letters_are_left_alone() -> None:
    for text in ("A: Madrid", "Réponse : à", "答案\uff1a北京", "x\u0301", "\\frac{1}{2}", "␠"):
        assert visible(text) == text


@given(st.text())
def test_visible_text_holds_nothing_hidden(text: str) -> None:
    shown = visible(text)
    assert not any(hidden(char) for char in shown)
    assert all(char in shown for char in text if not hidden(char))


def test_the_characters_that_pass_for_nothing_or_a_space_are_all_hidden() -> None:
    unseen = (
        "\u200b\u200c\u200d\u2060\ufeff\u00ad"  # zero-width, joiners, BOM, soft hyphen
        "\u200e\u200f\u202a\u202e\u2066\u2069"  # direction marks, overrides, isolates
        "\u00a0\u2002\u2009\u202f\u3000"  # spaces other than the plain one
        "\x00\x1b\x7f\x85\u2028\u2029\ue000"  # controls, separators, private use
    )
    assert [char for char in unseen if not hidden(char)] == []
    assert not any(hidden(char) for char in " aZ9.,;:!?¿é答\u0301")


def test_a_doubled_space_is_pointed_at() -> None:
    lines = marked_diff(["@@ -1 +1 @@", "-| A: Madrid", "+| A:  Madrid", " | B"])
    assert lines == ["@@ -1 +1 @@", "-| A: Madrid", "+| A:  Madrid", "?     ^", " | B"]


def test_a_zero_width_space_is_written_out_and_pointed_at() -> None:
    lines = marked_diff(["-| Answer:", "+| Answer:\u200b"])
    assert lines == ["-| Answer:", "+| Answer:⟨U+200B⟩", "?         ^^^^^^^^"]


def test_a_replaced_character_is_pointed_at_on_both_sides() -> None:
    lines = marked_diff(["-| Answer: A", "+| Answer: B", "-| x", "+| y"])
    assert lines[:4] == ["-| Answer: A", "?          ^", "+| Answer: B", "?          ^"]


def test_lines_with_little_in_common_get_no_guide() -> None:
    assert guide("abcdef", "uvwxyz") is None
    assert marked_diff(["-| abcdef", "+| uvwxyz"]) == ["-| abcdef", "+| uvwxyz"]


def test_a_removal_run_pairs_with_the_addition_run_after_it() -> None:
    lines = marked_diff(["-| one", "-| two", "+| one!", " | ctx", "+| new"])
    assert lines == ["-| one", "-| two", "+| one!", "?     ^", " | ctx", "+| new"]


def test_a_long_line_is_marked_in_linear_time() -> None:
    """A prompt line of a whole document: the changed middle is marked whole, not matched."""
    old, new = "ab" * 100_000, "ab" * 50_000 + "Q" + "ab" * 50_000
    marks = guide(old, new)
    assert marks is not None and marks[1].strip() == "^" and marks[0] == ""
    assert guide("x" * 200_000, "y" * 200_000) is None
