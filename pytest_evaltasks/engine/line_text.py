"""Prompt text as snapshot lines that survive every reader, editor and checkout unchanged.

A snapshot shows each prompt line behind `| `. The file reader strips trailing whitespace
(`str.rstrip`, every Unicode space) and splits on LF after turning CRLF and CR into LF; editors
and checkouts may strip trailing whitespace too, or break lines wherever `str.splitlines` does;
and a lone surrogate cannot be written as UTF-8 at all. So a line is written with no character
that any of them could strip or break on, and the writing is reversible:

- C0 controls (but a tab inside the line) and DEL are written `\\xNN`;
- line breaks beyond C0 (U+0085, U+2028, U+2029) and surrogates are written `\\uXXXX`;
- the trailing whitespace run is made visible: a space is `␠`, a tab `\\x09`, any other
  whitespace `\\xNN` below U+0100 (NBSP `\\xa0`), else `\\uXXXX` (U+3000 `\\u3000`);
- a literal `␠` is written `\\u2420`, so it is not read back as a space;
- a literal backslash is written `\\\\` exactly when what follows it in the written line would
  otherwise read as an escape: `\\`, `x` and 2 hex digits, or `u` and 4 hex digits. Every other
  backslash (LaTeX `\\frac`, a literal `\\n`) stays as it is.

Hex is written lowercase; reading accepts either case.
"""

from __future__ import annotations

import json
import re
from typing import Any

VISIBLE_SPACE = "\u2420"
"""A trailing space, made visible so that no editor or checkout can strip it."""

_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
"""Every character `str.splitlines` breaks a line on (the tests check this set is complete)."""

_ESCAPE_AFTER_BACKSLASH = re.compile(r"\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}")
"""What, after a backslash, reads as an escape: a backslash before it must be doubled."""

_LOOKAHEAD = 5
"""Characters of the written text after a backslash that decide whether it reads as an escape."""

_READ_TOKEN = re.compile(r"\\(?:(\\)|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4}))|" + VISIBLE_SPACE)

_NOT_RAW_IN_JSON = re.compile("[\x7f\ud800-\udfff" + "".join(sorted(_LINE_BREAKS)) + "]")
"""What `json.dumps(ensure_ascii=False)` may leave raw that cannot sit raw in a snapshot line."""


def _escaped_anywhere(char: str) -> bool:
    """Whether a character is escaped wherever it is: controls, DEL, line breaks, surrogates,
    and `␠`, which would read back as a space."""
    code = ord(char)
    return (
        (code < 0x20 and char != "\t")
        or code == 0x7F
        or char in _LINE_BREAKS
        or 0xD800 <= code <= 0xDFFF
        or char == VISIBLE_SPACE
    )


def _escape(char: str) -> str:
    """`\\xNN` below U+0100, except U+0085, which is written like the other line breaks (and as
    JSON writes it); `\\uXXXX` otherwise. No character above U+FFFF is ever escaped."""
    code = ord(char)
    if code < 0x100 and char != "\x85":
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


_NEEDS_ESCAPING = re.compile(
    "[\\\\\x00-\x08\x0a-\x1f\x7f\ud800-\udfff" + VISIBLE_SPACE + "".join(sorted(_LINE_BREAKS)) + "]"
)
"""A character that may need escaping wherever it stands (a backslash may need doubling)."""


def escape_line(text: str) -> str:
    """One line's text as written: no character a reader, editor or checkout could strip or
    treat as a line break survives raw; reversible by unescape_line.

    Written right to left, since whether a backslash is doubled depends on what is written
    after it; the result never ends in whitespace and holds no `str.splitlines` break. Most
    lines hold nothing to escape: they are returned as they are after one regex search.
    """
    if not text or (not text[-1].isspace() and _NEEDS_ESCAPING.search(text) is None):
        return text
    trailing_from = len(text.rstrip())  # the trailing whitespace run, as a reader strips it
    tokens: list[str] = []
    ahead = ""  # the first characters written after the current one
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if index >= trailing_from:
            token = VISIBLE_SPACE if char == " " else _escape(char)
        elif char == "\\":
            token = "\\\\" if _ESCAPE_AFTER_BACKSLASH.match(ahead) else "\\"
        elif _escaped_anywhere(char):
            token = _escape(char)
        else:
            token = char
        tokens.append(token)
        ahead = (token + ahead)[:_LOOKAHEAD]
    return "".join(reversed(tokens))


def _read_token(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\"
    digits = match.group(2) or match.group(3)
    return chr(int(digits, 16)) if digits else " "


def unescape_line(text: str) -> str:
    """The exact inverse of escape_line: `unescape_line(escape_line(s)) == s` for every `s`.

    Read left to right: `\\\\` is a backslash, `\\xNN` and `\\uXXXX` the character, `␠` a
    space; any other backslash is itself.
    """
    return _READ_TOKEN.sub(_read_token, text)


def quote_text(text: str) -> list[str]:
    """A multi-line text (a prompt) as snapshot lines: split on "\\n", each line
    `"| " + escape_line(line)`, or `"|"` alone for an empty line (a reader strips the space)."""
    return [f"| {escaped}" if (escaped := escape_line(line)) else "|" for line in text.split("\n")]


def unquote_lines(lines: list[str]) -> str:
    """Inverse of quote_text: `unquote_lines(quote_text(s)) == s`, also after a reader has
    stripped each line's trailing whitespace."""
    texts: list[str] = []
    for line in lines:
        if line == "|":
            texts.append("")
        elif line.startswith("| "):
            texts.append(unescape_line(line[2:]))
        else:
            raise ValueError(f"not a quoted prompt line (it must start with '|'): {line!r}")
    return "\n".join(texts)


_FILE_JSON = json.JSONEncoder(ensure_ascii=False)
"""The encoder `json.dumps(value, ensure_ascii=False)` makes, made once: `json.dumps` makes a
new one for every call given an argument, and a snapshot's header and docs shown take a few
dozen values per task."""


def file_json(value: Any) -> str:
    """json.dumps(value, ensure_ascii=False) with the characters that cannot sit raw in a
    snapshot line written as JSON \\uXXXX escapes (surrogates, U+0085, U+2028, U+2029, \\x7f,
    and any other `str.splitlines` break); json.loads of the result gives the value back.

    Non-ASCII output of `json.dumps` is only ever inside strings, where an escape means the
    same character. One value JSON cannot hold: a lone high surrogate directly followed by a
    lone low surrogate is read back by any JSON reader as the one character the pair encodes
    (the written text still differs from that character's, so a snapshot tells them apart).
    """
    text = _FILE_JSON.encode(value)
    if _NOT_RAW_IN_JSON.search(text) is None:
        return text  # the usual case: nothing to escape
    return _NOT_RAW_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
