"""Compare the two sides of a port doc by doc, and classify what differs.

Docs are paired by their source row (or key), in one pass over each side: linear in the rows.
Each difference is put in one kind, named with the docs it affects and one example:

- `coverage`: rows only one side builds;
- `doc order`: the aligned rows come in another order;
- `few-shot selection`: other few-shot examples (by their source rows);
- `delimiter or whitespace`: the prompts differ only in spaces, line breaks and punctuation;
- `instruction`: the prompts differ in words (with other few-shot examples on the two
  sides, only the doc's own part, after the last blank line, is compared: the examples'
  words differ anyway, and are counted as the selection's);
- `choice labels`: the choices or continuations scored differ (not compared when both sides
  generate: a generative doc's choices are only its references);
- `target form`: the gold answer differs as text;
- `stop sequences`, `generation length`: what ends a generation (compared when both sides
  generate; one that generates where the other scores choices is a `generation length`);
- `chat messages`: the prompts agree, the chat-templated texts do not.

Under a chat template, what is compared is the templated text where both sides give one (a
side that templates its prompt itself, lm-eval, gives it as both).

A prompt's difference is shown at character level: the changed stretch with a little context,
every invisible character written as its code point (`visible`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..engine.ports import PortDoc
from .facts import label_key
from .visible import common_ends, visible

KINDS = (
    "coverage",
    "doc order",
    "few-shot selection",
    "delimiter or whitespace",
    "instruction",
    "choice labels",
    "target form",
    "stop sequences",
    "generation length",
    "chat messages",
)
"""Every kind of difference, in the order a record lists them."""

ROWS_NAMED = 5
"""Rows a difference names; the rest are counted, and digested with them."""

CONTEXT = 12
"""Characters of unchanged text shown on each side of a changed stretch."""

_WORDS = re.compile(r"\w+", re.UNICODE)


@dataclass
class Difference:
    """One kind of difference: the docs it affects, in `a`'s order, and the first's example."""

    kind: str
    rows: list[str] = field(default_factory=list)
    example: str = ""

    def add(self, row: str, example: Callable[[], str]) -> None:
        """Count a doc (once, whatever it differs in within the kind); the first one's example
        is kept."""
        if not self.rows:
            self.example = example()
        elif self.rows[-1] == row:
            return
        self.rows.append(row)

    def lines(self) -> list[str]:
        """As the record writes it: the kind, the count, the first rows (in row order) and a
        digest of all; the example is the first doc's in `a`'s evaluation order."""
        rows = sorted(self.rows, key=label_key)
        named = ", ".join(rows[:ROWS_NAMED])
        more = f", ... +{len(rows) - ROWS_NAMED}" if len(rows) > ROWS_NAMED else ""
        digest = hashlib.sha256("\n".join(rows).encode("utf-8", "surrogatepass"))
        count = f"{len(self.rows)} doc{'s' if len(self.rows) != 1 else ''}"
        head = f"{self.kind}: {count} ({named}{more}; #{digest.hexdigest()[:12]})"
        return [head, f"  e.g. {self.example}"]


@dataclass(frozen=True)
class Comparison:
    """What a port's check found: the docs each side built, how many aligned, what differs."""

    a_docs: int
    b_docs: int
    aligned: int
    differences: list[Difference]

    @property
    def identical(self) -> bool:
        return not self.differences


def compare(a: Sequence[PortDoc], b: Sequence[PortDoc], by_key: bool = False) -> Comparison:
    """Pair the docs of two sides (`indexed`) and classify what differs."""
    a_by, b_by = indexed(a, b, by_key)
    found = {kind: Difference(kind) for kind in KINDS}
    only_a = [ident for ident in a_by if ident not in b_by]
    only_b = [ident for ident in b_by if ident not in a_by]
    if only_a or only_b:
        found["coverage"].rows = [*(f"a:{r}" for r in only_a), *(f"b:{r}" for r in only_b)]
        found["coverage"].example = (
            f"{len(only_a)} only in a ({_first(only_a)}), {len(only_b)} only in b "
            f"({_first(only_b)})"
        )
    common = [ident for ident in a_by if ident in b_by]
    b_order = [ident for ident in b_by if ident in a_by]
    if common != b_order:
        moved = [ident for ident, other in zip(common, b_order, strict=True) if ident != other]
        found["doc order"].rows = moved
        found["doc order"].example = f"a evaluates {_first(common)}; b evaluates {_first(b_order)}"
    for ident in common:
        _classify(ident, a_by[ident], b_by[ident], found)
    differences = [found[kind] for kind in KINDS if found[kind].rows]
    return Comparison(len(a), len(b), len(common), differences)


def indexed(
    a: Sequence[PortDoc], b: Sequence[PortDoc], by_key: bool = False
) -> tuple[dict[str, PortDoc], dict[str, PortDoc]]:
    """Each side's docs by what pairs them, in its own order: the row (`test/12`), the key
    column's value, or, when a side's rows name no split (Inspect keeps none), the row index
    alone."""
    splitless = not by_key and any("/" not in doc.row for doc in (*a[:1], *b[:1]))
    return _index(a, by_key, splitless), _index(b, by_key, splitless)


def pairs(
    a: Sequence[PortDoc], b: Sequence[PortDoc], by_key: bool = False
) -> list[tuple[str, PortDoc, PortDoc]]:
    """The docs both sides built, paired as `compare` pairs them, in `a`'s order."""
    a_by, b_by = indexed(a, b, by_key)
    return [(ident, doc, b_by[ident]) for ident, doc in a_by.items() if ident in b_by]


def _index(docs: Sequence[PortDoc], by_key: bool, splitless: bool) -> dict[str, PortDoc]:
    """Docs by their row (or key, or row index alone), first one kept: a repeated row is one
    row."""
    indexed: dict[str, PortDoc] = {}
    for doc in docs:
        if by_key:
            ident = doc.key if doc.key is not None else f"<no key: {doc.row}>"
        else:
            ident = doc.row.rpartition("/")[2] if splitless else doc.row
        indexed.setdefault(ident, doc)
    return indexed


def _first(rows: Sequence[str], count: int = 3) -> str:
    shown = ", ".join(rows[:count])
    return shown + (", ..." if len(rows) > count else "") if rows else "none"


def _classify(ident: str, a: PortDoc, b: PortDoc, found: dict[str, Difference]) -> None:
    """Every kind one aligned pair of docs differs in."""
    same_shots = (
        a.fewshot_rows is None or b.fewshot_rows is None or a.fewshot_rows == b.fewshot_rows
    )
    if not same_shots:
        found["few-shot selection"].add(
            ident,
            lambda: (
                f"{ident}: a {_first(list(a.fewshot_rows or ()))}; "
                f"b {_first(list(b.fewshot_rows or ()))}"
            ),
        )
    both_chat = a.chat is not None and b.chat is not None
    a_sent, b_sent = (a.chat or "", b.chat or "") if both_chat else (a.prompt, b.prompt)
    if a_sent != b_sent and both_chat and a.prompt == b.prompt:
        found["chat messages"].add(ident, lambda: _example(ident, a_sent, b_sent, None))
    elif a_sent != b_sent:
        a_text, b_text = (a_sent, b_sent) if same_shots else (_own(a_sent), _own(b_sent))
        delimiter, word = _prompt_kinds(a_text, b_text) if a_text != b_text else (False, False)
        if delimiter:
            found["delimiter or whitespace"].add(
                ident, lambda: _example(ident, a_text, b_text, _prompt_hunks(a_text, b_text)[0])
            )
        if word:
            found["instruction"].add(
                ident, lambda: _example(ident, a_text, b_text, _prompt_hunks(a_text, b_text)[1])
            )
    if a.choices != b.choices and not (a.generates and b.generates):
        stripped = [c.strip() for c in a.choices] == [c.strip() for c in b.choices]
        kind = "delimiter or whitespace" if stripped else "choice labels"
        found[kind].add(ident, lambda: f"{ident}: a {_shown(a.choices)}; b {_shown(b.choices)}")
    if a.target != b.target:
        found["target form"].add(
            ident, lambda: f"{ident}: a {visible(repr(a.target))}; b {visible(repr(b.target))}"
        )
    if a.generates != b.generates:
        found["generation length"].add(ident, lambda: f"{ident}: a {_ending(a)}; b {_ending(b)}")
    elif a.generates:
        if set(a.stops) != set(b.stops):
            found["stop sequences"].add(
                ident, lambda: f"{ident}: a {_shown(a.stops)}; b {_shown(b.stops)}"
            )
        if a.max_tokens != b.max_tokens:
            found["generation length"].add(
                ident, lambda: f"{ident}: a {_ending(a)}; b {_ending(b)}"
            )


def _own(prompt: str) -> str:
    """The doc's own part of a few-shot prompt: what follows its last blank line, where every
    harness here ends its last example. Compared alone when the two sides chose other
    examples, whose words differ anyway."""
    return prompt.rpartition("\n\n")[2]


Hunk = tuple[int, int, int, int]
"""A changed stretch: `a[i1:i2]` became `b[j1:j2]` (character offsets)."""


def _prompt_kinds(a: str, b: str) -> tuple[bool, bool]:
    """Whether two different prompts differ in delimiters, and in words. Two prompts with the
    same words differ in delimiters only: found without a diff (the usual case, and every doc
    of a port may be one)."""
    if _WORDS.findall(a) == _WORDS.findall(b):
        return True, False
    delimiter, word = _prompt_hunks(a, b)
    return delimiter is not None, word is not None


def _prompt_hunks(a: str, b: str) -> tuple[Hunk | None, Hunk | None]:
    """The first changed stretch of two prompts that is delimiters only (the text between two
    words, or at either end), and the first that changes words; None when there is none.

    The prompts are compared word by word: when their words are the same (the usual case of a
    changed delimiter) no diff is needed, only the texts between words; otherwise the word lists
    are diffed, and the texts between words are compared inside the runs of words that agree.
    The cost stays near linear in the prompt's length."""
    a_at = [match.span() for match in _WORDS.finditer(a)]
    b_at = [match.span() for match in _WORDS.finditer(b)]
    a_words = [a[start:end] for start, end in a_at]
    b_words = [b[start:end] for start, end in b_at]
    if a_words == b_words:
        blocks = [(0, 0, len(a_words))]
    else:
        matcher = difflib.SequenceMatcher(None, a_words, b_words, autojunk=False)
        blocks = [(i, j, size) for i, j, size in matcher.get_matching_blocks()]
    delimiter: Hunk | None = None
    word: Hunk | None = None
    a_done = b_done = 0  # words of each side covered so far
    for i, j, size in blocks:
        if word is None and (i > a_done or j > b_done):
            word = (_start(a_at, a_done, a), _end(a_at, i, a_done, a),
                    _start(b_at, b_done, b), _end(b_at, j, b_done, b))  # fmt: skip
        if delimiter is None:
            first = 0 if i == 0 and j == 0 else 1
            last = size + (1 if i + size == len(a_at) and j + size == len(b_at) else 0)
            for k in range(first, last):
                one, other = _between(a_at, i + k, a), _between(b_at, j + k, b)
                if a[one[0] : one[1]] != b[other[0] : other[1]]:
                    delimiter = (*one, *other)
                    break
        a_done, b_done = i + size, j + size
        if delimiter is not None and word is not None:
            break
    return delimiter, word


def _between(spans: list[tuple[int, int]], k: int, text: str) -> tuple[int, int]:
    """The text between word `k - 1` and word `k` (from the start before the first word, to the
    end after the last)."""
    start = spans[k - 1][1] if k > 0 else 0
    end = spans[k][0] if k < len(spans) else len(text)
    return start, end


def _start(spans: list[tuple[int, int]], k: int, text: str) -> int:
    return spans[k][0] if k < len(spans) else len(text)


def _end(spans: list[tuple[int, int]], k: int, done: int, text: str) -> int:
    return spans[k - 1][1] if k > done else _start(spans, done, text)


def _example(ident: str, a: str, b: str, hunk: Hunk | None) -> str:
    """One changed stretch with a little context on each side, invisible characters visible."""
    i1, i2, j1, j2 = _narrowed(a, b, hunk or (0, len(a), 0, len(b)))
    before = a[max(0, i1 - CONTEXT) : i1]
    after = a[i2 : i2 + CONTEXT]
    return (
        f"{ident}: a {_quoted(before, a[i1:i2], after)}; b "
        f"{_quoted(b[max(0, j1 - CONTEXT) : j1], b[j1:j2], b[j2 : j2 + CONTEXT])}"
    )


def _narrowed(a: str, b: str, hunk: Hunk) -> Hunk:
    """A changed stretch without the characters its two sides share at its start and end."""
    i1, i2, j1, j2 = hunk
    start, a_end, b_end = common_ends(a[i1:i2], b[j1:j2])
    return i1 + start, i1 + a_end, j1 + start, j1 + b_end


def _quoted(before: str, changed: str, after: str) -> str:
    """`"...context[changed]context..."`, written visibly (a line break as `\\n`)."""
    return '"' + _plain(before) + "[" + _plain(changed) + "]" + _plain(after) + '"'


def _plain(text: str) -> str:
    return visible(text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t"))


def _ending(doc: PortDoc) -> str:
    """How a doc's answer ends: a generation's length, or choices scored."""
    if not doc.generates:
        return "scores the choices (no generation)"
    if doc.max_tokens:
        return f"generates up to {doc.max_tokens} tokens"
    return "generates (no length set: its model's default)"


def _shown(values: Sequence[str]) -> str:
    return visible(repr(list(values)))
