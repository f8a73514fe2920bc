"""Prompt lines survive every reader, editor and checkout, and most prompts stay as they are.

- any text, written as snapshot lines, encodes as UTF-8 and reads back exactly, however the
  file is read: LF or CRLF, trailing whitespace stripped, split on LF or on every line break;
- nothing in a written line is stripped or breaks it: only LF separates lines;
- a backslash is doubled exactly where a single one would be misread, and nowhere else;
- ordinary prompts (interior spaces, tabs, NBSP, accents, CJK, LaTeX) are written unchanged;
- `file_json` is JSON that reads back as the value, with no character that cannot sit raw.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_evaltasks.engine.line_text import (
    VISIBLE_SPACE,
    escape_line,
    file_json,
    quote_text,
    unescape_line,
    unquote_lines,
)

PROPERTY = settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

ALL_CHARS = [chr(code) for code in range(0x110000)]
LINE_BREAKS = [char for char in ALL_CHARS if len(f"a{char}b".splitlines()) != 1]
"""Every character `str.splitlines` breaks on, found by trying them all."""
WHITESPACE = [char for char in ALL_CHARS if char.isspace()]
"""Every character `str.rstrip` strips, found by trying them all."""

SPECIAL = [
    "\\", "\\", "x", "u", "X", "U", "0", "5", "9", "a", "c", "f", "A", "F", "g", VISIBLE_SPACE,
    " ", " ", "\t", "\r", "\n", "\r\n", "\x00", "\x0b", "\x0c", "\x1c", "\x1f", "\x7f", "\x85",
    "\xa0", "\u3000", "\u2028", "\u2029", "\ud800", "\udc00", "\ud83d", "\ude00", "\U0001f600",
    "\\x41", "\\x4F", "\\u2420", "\\u00e9", "\\\\", "\\n", "\\frac",
]  # fmt: skip
"""Characters and pieces that exercise every escape, and every way to misread one."""

ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()))
"""Every code point can appear: surrogates, controls, every category."""
SPECIAL_TEXT = st.lists(
    st.sampled_from(SPECIAL) | st.characters(exclude_categories=()), max_size=30
).map("".join)
TEXTS = ANY_TEXT | SPECIAL_TEXT

HEX_ESCAPE_AHEAD = r"(?=\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})"
"""After a backslash: what reads as an escape."""


def written(text: str) -> bytes:
    """The prompt as a snapshot file holds it: one line each, a final LF, strict UTF-8."""
    return ("\n".join(quote_text(text)) + "\n").encode("utf-8")


def read_by_the_plugin(data: bytes) -> list[str]:
    """The file reader: CRLF and CR to LF, split on LF, every line right-stripped."""
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    lines = [line.rstrip() for line in text.split("\n")]
    assert lines[-1] == ""
    return lines[:-1]


def read_by_an_editor(data: bytes) -> list[str]:
    """An editor that breaks lines wherever `str.splitlines` does and strips trailing spaces."""
    return [line.rstrip() for line in data.decode("utf-8").splitlines()]


@PROPERTY
@given(TEXTS)
def test_any_text_reads_back_exactly_after_any_reader(text: str) -> None:
    data = written(text)
    crlf = data.replace(b"\n", b"\r\n")  # a checkout with autocrlf
    assert unquote_lines(read_by_the_plugin(data)) == text
    assert unquote_lines(read_by_the_plugin(crlf)) == text
    assert unquote_lines(read_by_an_editor(data)) == text
    assert unquote_lines(read_by_an_editor(crlf)) == text


@PROPERTY
@given(TEXTS)
def test_only_lf_breaks_a_written_line(text: str) -> None:
    file_text = written(text).decode("utf-8")
    assert file_text.splitlines() == file_text.split("\n")[:-1]
    assert all(line == line.rstrip() for line in file_text.split("\n"))


@PROPERTY
@given(TEXTS)
def test_escape_line_round_trips_and_leaves_nothing_to_strip_or_break(text: str) -> None:
    escaped = escape_line(text)
    assert unescape_line(escaped) == text
    assert escaped == escaped.rstrip()
    assert not set(escaped) & set(LINE_BREAKS)
    escaped.encode("utf-8")  # strict: no surrogate is left raw


@PROPERTY
@given(TEXTS)
def test_a_backslash_is_doubled_only_where_a_single_one_would_be_misread(text: str) -> None:
    escaped = escape_line(text)
    for token in re.finditer(r"\\(?:\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})|" + VISIBLE_SPACE, escaped):
        if token.group() == "\\\\":  # a literal backslash, doubled
            single = escaped[: token.start()] + escaped[token.start() + 1 :]
            assert unescape_line(single) != text


ORDINARY_CHARS = st.characters(
    categories=("L", "M", "N", "P", "S", "Zs"), exclude_characters=VISIBLE_SPACE
)
ORDINARY_TEXT = st.lists(
    ORDINARY_CHARS | st.sampled_from(["\\", "\\", "x", "u", "0", "a", "F", "\t"]), max_size=30
).map(lambda chars: "".join(chars).rstrip())


@PROPERTY
@given(ORDINARY_TEXT)
def test_ordinary_text_is_written_as_is_but_for_backslashes_that_would_read_as_escapes(
    text: str,
) -> None:
    assert escape_line(text) == re.sub(r"\\" + HEX_ESCAPE_AHEAD, r"\\\\", text)


@pytest.mark.parametrize(
    ("alphabet", "longest"),
    [
        (["\\", "x", "u", "0", " ", "\x00"], 6),
        (["\\", "x", "a", " ", "\t", VISIBLE_SPACE, "\x00", "\u2028", "\ud800", "\xa0", "\n"], 3),
    ],
)
def test_every_short_text_of_special_characters_round_trips(
    alphabet: list[str], longest: int
) -> None:
    for size in range(longest + 1):
        for chars in itertools.product(alphabet, repeat=size):
            text = "".join(chars)
            assert unquote_lines(read_by_the_plugin(written(text))) == text, text


def test_every_line_break_character_is_escaped_anywhere() -> None:
    assert LINE_BREAKS  # the scan found them
    for char in LINE_BREAKS:
        for text in (f"a{char}b", f"{char}b", f"a{char}"):
            escaped = escape_line(text)
            assert not set(escaped) & set(LINE_BREAKS), repr(char)
            assert unescape_line(escaped) == text


def test_every_whitespace_character_at_a_line_end_is_made_visible() -> None:
    for char in WHITESPACE:
        escaped = escape_line(f"a{char}{char}")
        assert escaped == escaped.rstrip(), repr(char)
        assert unescape_line(escaped) == f"a{char}{char}"


def test_whitespace_inside_a_line_stays_raw_unless_it_is_a_control_or_a_line_break() -> None:
    for char in WHITESPACE:
        if ord(char) >= 0x20 and char not in LINE_BREAKS:
            assert escape_line(f"a{char}b") == f"a{char}b", repr(char)


EXAMPLES = [
    ("Question: What is 2+2?\nAnswer:", ["| Question: What is 2+2?", "| Answer:"]),
    ("¿qué?\n日本語の質問\n\n  indented\tand\xa0spaced  inside", None),
    ("", ["|"]),
    ("\n\nlast", ["|", "|", "| last"]),
    ("Answer: ", ["| Answer:␠"]),
    ("Answer:   ", ["| Answer:␠␠␠"]),
    ("Answer:\t", ["| Answer:\\x09"]),
    ("Answer: \t ", ["| Answer:␠\\x09␠"]),
    ("Answer:\xa0", ["| Answer:\\xa0"]),
    ("Answer:\u3000", ["| Answer:\\u3000"]),
    ("Answer:\u2028", ["| Answer:\\u2028"]),
    ("Answer:\x85", ["| Answer:\\u0085"]),
    ("one\u2028two\u2029three\x85four", ["| one\\u2028two\\u2029three\\u0085four"]),
    ("a\x0bb\x0cc\x1cd\x00e\x7f", ["| a\\x0bb\\x0cc\\x1cd\\x00e\\x7f"]),
    ("carriage\rreturn\r\n", ["| carriage\\x0dreturn\\x0d", "|"]),
    ("  \t", ["| ␠␠\\x09"]),
    ("\\frac{1}{2} and \\sqrt{x}", None),
    ("a literal \\n and \\t", None),
    ("\\underline{x} \\xrightarrow \\usepackage \\x4 \\u12", None),
    ("C:\\Users\\me\\", None),
    ("\\x41", ["| \\\\x41"]),
    ("\\u2420", ["| \\\\u2420"]),
    ("\\X41 \\U0041", None),
    ("\\\\", ["| \\\\\\"]),
    ("\\\x00", ["| \\\\\\x00"]),
    ("\\ ", ["| \\␠"]),
    ("\\\t", ["| \\\\\\x09"]),
    (f"a {VISIBLE_SPACE} b", ["| a \\u2420 b"]),
    (f"{VISIBLE_SPACE} ", ["| \\u2420␠"]),
    ("lone \ud800 and \udfff", ["| lone \\ud800 and \\udfff"]),
    ("\ud83d\ude00 is not \U0001f600", ["| \\ud83d\\ude00 is not \U0001f600"]),
]


@pytest.mark.parametrize(("text", "lines"), EXAMPLES)
def test_examples(text: str, lines: list[str] | None) -> None:
    """`None`: the text is written unchanged."""
    expected = (
        [f"| {line}" if line else "|" for line in text.split("\n")] if lines is None else lines
    )
    assert quote_text(text) == expected
    assert unquote_lines(read_by_the_plugin(written(text))) == text


def test_hex_digits_read_in_either_case() -> None:
    assert unescape_line("\\x4A\\u00E9\\x4a") == "Jé" + "J"
    assert escape_line("\\x4A") == "\\\\x4A"
    assert unescape_line(escape_line("\\x4A")) == "\\x4A"


@pytest.mark.parametrize("line", ["no bar", "|no space", " | indented", ""])
def test_a_line_that_is_not_quoted_is_refused(line: str) -> None:
    with pytest.raises(ValueError, match="not a quoted prompt line"):
        unquote_lines(["| fine", line])


def _pairs_joined(value: Any) -> Any:
    """The value as any JSON reader gives it back: a high surrogate followed by a low one is
    read as the one character the pair encodes."""
    if isinstance(value, str):
        return re.sub(
            "[\ud800-\udbff][\udc00-\udfff]",
            lambda m: chr(0x10000 + ((ord(m[0][0]) - 0xD800) << 10) + ord(m[0][1]) - 0xDC00),
            value,
        )
    if isinstance(value, list):
        return [_pairs_joined(item) for item in value]
    if isinstance(value, dict):
        return {_pairs_joined(key): _pairs_joined(item) for key, item in value.items()}
    return value


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXTS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXTS, children, max_size=4),
    max_leaves=12,
)


@PROPERTY
@given(JSON_VALUES)
def test_file_json_reads_back_and_can_sit_raw_in_a_line(value: Any) -> None:
    text = file_json(value)
    assert json.loads(text) == _pairs_joined(value)
    text.encode("utf-8")  # strict
    assert text.splitlines() == [text]
    assert text == text.rstrip()


@PROPERTY
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | ORDINARY_TEXT,
        lambda children: (
            st.lists(children, max_size=4) | st.dictionaries(ORDINARY_TEXT, children, max_size=4)
        ),
        max_leaves=8,
    )
)
def test_file_json_of_ordinary_values_is_plain_json(value: Any) -> None:
    """The encoder made once writes what `json.dumps` writes (NaN and infinities included)."""
    assert file_json(value) == json.dumps(value, ensure_ascii=False)
    assert file_json(value) == file_json(value)  # no state kept between calls


def test_file_json_escapes_what_cannot_sit_raw() -> None:
    assert file_json(["¿qué?", "日本語", "\x7f\x85\u2028\u2029\ud800\udfff", "\n\t"]) == (
        '["¿qué?", "日本語", "\\u007f\\u0085\\u2028\\u2029\\ud800\\udfff", "\\n\\t"]'
    )
    assert file_json({"\u2028": 1}) == '{"\\u2028": 1}'


def test_file_json_tells_a_surrogate_pair_from_its_character_though_json_reads_both_alike() -> None:
    assert file_json("\ud83d\ude00") == '"\\ud83d\\ude00"'
    assert file_json("\U0001f600") == '"\U0001f600"'
    assert json.loads(file_json("\ud83d\ude00")) == "\U0001f600"  # what no JSON can avoid
    assert json.loads(file_json("\ude00\ud83d")) == "\ude00\ud83d"  # lone, in this order
