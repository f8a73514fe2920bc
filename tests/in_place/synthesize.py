"""Synthetic dataset rows for any task config, derived from its prompt function's behaviour.

Nothing here knows a task. The columns are found by probing: the prompt function (and the
config's `hf_filter`) is called on a row whose unknown keys answer with a `Probe`, and the first
use of a probe tells its column's type (indexed by a number or iterated: a list; `int()` or
used as an index: an int; a string method: a str; indexed by a string: a nested dict; compared
with a literal: that literal's type; `.get(key, default)`: the default's type). The call is
then made again. Known columns hold real values that remember their column, so a call shows
which values a column may take: a literal it is compared with (`x == "yes"`,
`["A", "B"].index(x)`, `"Numeric" in x`), another column's values (`labels.index(answer)`
makes `answer` one of the row's labels), a separator it is split at, numbers written as text
(`int(x)`), JSON or Python literals (`json.loads(x)`: the decoded value is probed in turn), or,
when a lookup fails, one of the function's own constants. A row that still fails is drawn
again, and each column tallies which way of drawing (a free value, a candidate, a blank) made
rows that worked; a column whose type never works tries the next type. A row is kept when
hf_filter keeps it and the prompt function makes a doc lighteval could render from it (a text
query, golds that index the choices), as an evaluation row and as a few-shot row; a few rows
the function drops (returns None) are kept too.

Rows vary (words, whitespace, list lengths, labels) and everything is drawn from one
`random.Random` (the global generators seeded while the prompt function runs), so the rows
are reproducible for a seed: `EVALTASKS_CORPUS_SEED`.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import json
import os
import random
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

DEFAULT_SEED = 20240613
ROWS = 8
KINDS = ("str", "int", "list", "dict", "float", "bool")
"""The types a column may take, in the order they are tried."""
WORDS = [
    *("apple", "river", "stone", "cloud", "garden", "lamp", "window", "orbit", "meadow"),
    *("copper", "violet", "harbor", "lantern", "pebble", "summit", "thistle", "ember"),
    *("quartz", "willow", "falcon", "canyon", "maple", "tundra", "delta", "prism"),
]
DICT_METHODS = {"keys", "values", "items", "get", "setdefault", "update", "pop"}


def corpus_seed() -> int:
    """The seed of the synthesized rows and samples: `EVALTASKS_CORPUS_SEED`, or a fixed one."""
    return int(os.environ.get("EVALTASKS_CORPUS_SEED", DEFAULT_SEED))


# the schema ----------------------------------------------------------------------------------


@dataclass(eq=False)
class Node:
    """One column (or list item, or nested field): its type and what its values may be."""

    kind: str = "?"
    depth: int = 0
    """How many lists enclose it."""
    tried: list[str] = field(default_factory=list)
    item: Node | None = None
    """A list's items; the decoded value of an encoded str."""
    fields: dict[str, Node] = field(default_factory=dict)
    constants: list[Any] = field(default_factory=list)
    """Literals its values were compared with: candidates for them."""
    peers: list[Node] = field(default_factory=list)
    """Columns whose values (in the same row) its values were compared with."""
    links: list[Node] = field(default_factory=list)
    """Columns combined with it (`a + b`): they change type together."""
    parts: list[str] = field(default_factory=list)
    """Separators a str is split at: each value holds each once."""
    numeric: bool = False
    """A str column of numbers written as text (`int(line["label"])`)."""
    encoding: str | None = None
    """`json` or `literal`: a str column holding an encoded value (`item`)."""
    open: bool = False
    """A dict whose keys are read (`.keys()`), not named: `constants` are its keys, `item`
    its values."""
    widened: bool = False
    """Whether the function's own constants were offered."""
    order: tuple[str, ...] = ()
    """The types its first use suggested, tried before the others."""
    tally: dict[str, list[float]] = field(default_factory=lambda: _prior())
    """For each way to draw a value (a free one, one from `constants` and `peers`, a blank
    one), the rows that worked and the rows tried: the ways that work are drawn more. A blank
    one starts unlikely: `x.strip() == ""` is mostly a guard, `x in ("", None)` rarely."""

    def settle(self, kind: str, schema: Schema, order: tuple[str, ...] = ()) -> None:
        """Give an unknown node its first type."""
        if self.kind == "?":
            self.order = order
            self.become(kind, schema)

    def become(self, kind: str, schema: Schema) -> None:
        if kind in ("list", "dict") and self.depth >= 3:
            kind = "str"  # no deeper nesting
        self.kind = kind
        self.tried.append(kind)
        self.item = Node(depth=self.depth + 1) if kind == "list" else None
        self.fields, self.constants, self.peers, self.parts = {}, [], [], []
        self.tally = _prior()
        self.numeric, self.encoding, self.widened, self.open = False, None, False, False
        schema.version += 1

    def next_kind(self, schema: Schema) -> bool:
        """Try the next type; False when every type was tried."""
        left = [kind for kind in dict.fromkeys([*self.order, *KINDS]) if kind not in self.tried]
        if left:
            self.become(left[0], schema)
        return bool(left)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in [*self.fields.values(), *([self.item] if self.item else [])]:
            yield from child.walk()


@dataclass(eq=False)
class Schema:
    root: Node = field(default_factory=lambda: Node("dict"))
    version: int = 0
    words: list[str] = field(default_factory=list)
    """The task's own name parts (`wmt20:de-en` → de, en): keys for a dict of unknown keys."""


class Learned(BaseException):
    """A probe learned its type: the call is abandoned and made again (a BaseException, so the
    prompt function's own `except Exception` does not swallow it)."""


class Recorder:
    """What one call of the prompt function revealed."""

    current: Recorder | None = None

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.drawn: list[tuple[Node, str]] = []
        """Each value drawn for the row: its column, and how it was drawn."""
        self.touched: list[Node] = []
        self.probes: list[Probe] = []
        self.news = 0

    def score(self, worked: bool) -> None:
        for node, way in self.drawn:
            node.tally[way][0] += worked
            node.tally[way][1] += 1

    def compared(self, node: Node, other: Any) -> None:
        """`node`'s value was compared with (or searched for) `other`."""
        self.touched.append(node)
        if isinstance(other, (TStr, TInt)) and other._node is not node:
            peer = other._node
            # the one in fewer lists (an answer among list items) takes the other's values; at
            # one depth, the one searched for (`labels.index(answer)` compares label == answer)
            dependent, source = (node, peer) if node.depth < peer.depth else (peer, node)
            if source not in dependent.peers:
                dependent.peers.append(source)
                self.news += 1
        elif isinstance(other, (str, int, float)) and not isinstance(other, bool):
            value = _plain(other)
            wanted = node.kind != "str" or isinstance(value, str)
            if wanted and value not in node.constants and len(node.constants) < 64:
                node.constants.append(value)
                self.news += 1


def _record(node: Node, other: Any) -> None:
    if Recorder.current is not None:
        Recorder.current.compared(node, other)


def _learned() -> NoReturn:
    """Count a schema change and abandon the call."""
    if Recorder.current is not None:
        Recorder.current.schema.version += 1
    raise Learned


# values that remember their column ---------------------------------------------------------


class TStr(str):
    """A str that records how it is compared, searched, split and converted."""

    _node: Node
    decoded: Any = None

    def __eq__(self, other: object) -> bool:
        _record(self._node, other)
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _record(self._node, other)
        return str.__ne__(self, other)

    __hash__ = str.__hash__

    def __contains__(self, part: object) -> bool:
        _record(self._node, part)  # `"Numerical" in x`: a value holding it is a candidate
        return str.__contains__(self, part)  # type: ignore[operator]

    def __str__(self) -> str:
        return self  # `str(x)` keeps the column

    def __int__(self) -> int:
        return int(self._numeric())

    def __float__(self) -> float:
        return float(self._numeric())

    def _numeric(self) -> str:
        if not self._node.numeric and Recorder.current is not None:
            self._node.numeric = True
            _learned()
        return str.__str__(self)

    def split(self, sep: str | None = None, maxsplit: int = -1) -> list[str]:  # type: ignore[override]
        return self._split(str.split, sep, maxsplit)

    def rsplit(self, sep: str | None = None, maxsplit: int = -1) -> list[str]:  # type: ignore[override]
        return self._split(str.rsplit, sep, maxsplit)

    def count(self, part: str, *args: Any) -> int:
        self._split(str.split, part, -1)  # `x.count("_") != 1`: values hold it once
        return str.count(self, part, *args)

    def _split(self, how: Any, sep: str | None, maxsplit: int) -> list[str]:
        node = self._node
        if isinstance(sep, str) and not str.__contains__(self, sep) and sep not in node.parts:
            node.parts.append(sep)  # values hold the separator
            _learned()
        return [_tracked(part, node) for part in how(self, sep, maxsplit)]


def _keeps_column(name: str) -> Any:
    method = getattr(str, name)

    @functools.wraps(method)
    def wrapped(self: TStr, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        return _tracked(result, self._node) if isinstance(result, str) else result

    return wrapped


for _name in ("strip", "lstrip", "rstrip", "lower", "upper", "casefold", "title", "replace"):
    setattr(TStr, _name, _keeps_column(_name))


class TInt(int):
    """An int that records equality comparisons."""

    _node: Node

    def __eq__(self, other: object) -> bool:
        _record(self._node, other)
        return int.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _record(self._node, other)
        return int.__ne__(self, other)

    __hash__ = int.__hash__


def _tracked(value: Any, node: Node) -> Any:
    if isinstance(value, str):
        value = TStr(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        value = TInt(value)
    else:
        return value
    value._node = node
    return value


class TList(list):  # type: ignore[type-arg]
    """A list that knows its column."""

    _node: Node


class Row(dict):  # type: ignore[type-arg]
    """A row (or nested dict) whose unknown keys become new columns, answering with probes."""

    def __init__(self, node: Node, values: dict[str, Any]) -> None:
        super().__init__(values)
        self._node = node

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        node = getattr(value, "_node", None) or self._node.fields.get(key)
        if node is not None and Recorder.current is not None:
            Recorder.current.touched.append(node)
        return value

    def __missing__(self, key: Any) -> Any:
        if not isinstance(key, str) or key.startswith("__") or Recorder.current is None:
            raise KeyError(key)
        node = self._node.fields[key] = Node(depth=self._node.depth)
        Recorder.current.schema.version += 1
        return Probe(node)

    def _open(self) -> None:
        """`.keys()` of a nested dict of no known field: its keys are data, not names."""
        node, recorder = self._node, Recorder.current
        if recorder and not (node.fields or node.open) and node is not recorder.schema.root:
            node.open, node.item = True, Node(depth=node.depth)
            node.constants = recorder.schema.words
            _learned()

    def keys(self) -> Any:
        self._open()
        return super().keys()

    def items(self) -> Any:
        self._open()
        return super().items()

    def values(self) -> Any:
        self._open()
        return super().values()

    def __iter__(self) -> Any:
        self._open()
        return super().__iter__()

    def __contains__(self, key: object) -> bool:
        if dict.__contains__(self, key) or not isinstance(key, str) or key.startswith("__"):
            return dict.__contains__(self, key)
        if Recorder.current is not None:  # `if "e" in line`: the column is there
            self._node.fields[key] = Node(depth=self._node.depth)
            _learned()
        return False

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self or not isinstance(key, str) or key.startswith("__"):
            return super().get(key, default)
        if default is None:
            return self[key]
        self._node.fields[key] = Node(depth=self._node.depth)
        self._node.fields[key].become(_kind_of(default) or "str", Recorder.current.schema)  # type: ignore[union-attr]
        raise Learned


def _kind_of(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    for kind, types_ in (("str", str), ("int", int), ("float", float), ("list", (list, tuple))):
        if isinstance(value, types_):
            return kind
    return "dict" if isinstance(value, dict) else None


class Probe:
    """The value of a column not known yet: its first use decides the column's type."""

    __slots__ = ("_node",)

    def __init__(self, node: Node) -> None:
        object.__setattr__(self, "_node", node)
        if Recorder.current is not None:
            Recorder.current.probes.append(self)

    def _is(self, kinds: str | None) -> Any:
        """Settle the column: the first of `kinds` (then the others, if it fails)."""
        recorder = Recorder.current
        if recorder is not None:
            order = tuple((kinds or "str").split())
            object.__getattribute__(self, "_node").settle(order[0], recorder.schema, order)
        raise Learned

    def __repr__(self) -> str:
        return "<probe>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in DICT_METHODS:
            return self._is("dict")
        return self._is("list str" if hasattr(list, name) else "str")  # `.index`: a list

    def __getitem__(self, key: Any) -> Any:
        kinds = {int: "list str dict", str: "dict", slice: "str list"}.get(type(key), "str")
        return self._is(kinds)

    def __eq__(self, other: object) -> bool:
        _record(object.__getattribute__(self, "_node"), other)
        return self._is(f"{_kind_of(other) or 'str'} str int")  # type: ignore[no-any-return]

    def __ne__(self, other: object) -> bool:
        return self.__eq__(other)

    def _added(self, other: Any) -> Any:
        if isinstance(other, Probe):  # `line["a"] + line["b"]`: lists, of one type together
            node, peer = object.__getattribute__(self, "_node"), other._node
            node.links.append(peer)
            peer.links.append(node)
            return self._is("list str int float")
        return self._is(_kind_of(other) if not isinstance(other, bool) else "int")

    def _number(self, other: Any = None) -> Any:
        return self._is("float" if isinstance(other, float) else "int")

    __add__ = __radd__ = _added
    __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __floordiv__ = __pow__ = _number
    __lt__ = __le__ = __gt__ = __ge__ = lambda self, other: self._is(_kind_of(other))
    __iter__ = __len__ = __reversed__ = lambda self: self._is("list str dict")
    __int__ = __index__ = __neg__ = __abs__ = lambda self: self._is("int")
    __mul__ = __rmul__ = lambda self, other: self._is("int")
    __float__ = __round__ = lambda self, *args: self._is("float")
    __str__ = __format__ = __mod__ = lambda self, *args: self._is("str")

    def __hash__(self) -> int:  # a dict key
        return self._is("str int")  # type: ignore[no-any-return]

    def __bool__(self) -> bool:
        return self._is("str list int bool")  # type: ignore[no-any-return]

    def __contains__(self, part: object) -> bool:
        return self._is("str list dict")  # type: ignore[no-any-return]

    def __rmod__(self, other: Any) -> Any:  # `"%s" % x`, or `n % x`
        return self._is("str" if isinstance(other, str) else "int")


# drawing rows ------------------------------------------------------------------------------


def _prior() -> dict[str, list[float]]:
    return {"free": [1, 2], "pool": [1, 2], "blank": [0.15, 1]}


def _text(node: Node, rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
    words.append(str(rng.randint(0, 999)))  # rows rarely repeat
    for part in node.parts:  # inside the text: `x.split(" (")[0]` is not empty
        words.insert(rng.randrange(1, len(words) + 1), part.strip() or part)
    text = " ".join(words)
    shape = rng.random()
    if shape < 0.15:
        return " " + text
    if shape < 0.3:
        return text + "\n"
    return text.replace(" ", "\n", 1) if shape < 0.4 else text


def _draw(node: Node, rng: random.Random, drawn: dict[int, list[Any]], length: int) -> Any:
    """A value for `node`; `drawn` holds the values already drawn in this row, by node."""
    pool = [*node.constants]
    for peer in node.peers:
        pool += drawn.get(id(peer), [])
    blank = [value for value in pool if isinstance(value, str) and not value.strip()]
    pool = [value for value in pool if value not in blank]
    ways = ["free", *(["pool"] if pool else []), *(["blank"] if blank else [])]
    scalar = node.kind in ("str", "int", "float") and not node.encoding
    way = rng.choices(ways, [node.tally[w][0] / node.tally[w][1] for w in ways])[0]
    if scalar and Recorder.current is not None and len(ways) > 1:
        Recorder.current.drawn.append((node, way))
    if scalar and way != "free":
        pool = pool if way == "pool" else blank
        value = pool[int(len(pool) * rng.random() ** 3)]  # the first ones most (`"ABCD"`)
        if isinstance(value, str) and node.parts:  # `x.split("/")[0] == subset`
            value += "".join(f"{part}{rng.choice(WORDS)}" for part in node.parts)
        if node.kind == "float" and isinstance(value, int):
            value = float(value)
        if _kind_of(value) == node.kind:
            return _keep(node, value, drawn)
    if node.kind == "?":
        return Probe(node)
    if node.kind == "str" and node.encoding is not None:
        assert node.item is not None
        decoded = _draw(node.item, rng, drawn, length)
        dump = functools.partial(json.dumps, default=repr) if node.encoding == "json" else repr
        text = TStr(dump(_plain(decoded)) if not isinstance(decoded, Probe) else "?")
        text._node, text.decoded = node, decoded
        return text
    if node.kind == "str":
        value = str(rng.randrange(length)) if node.numeric else _text(node, rng)
    elif node.kind == "int":
        value = rng.randrange(length)
    elif node.kind == "float":
        value = rng.randrange(length * 4) / 4
    elif node.kind == "bool":
        value = rng.random() < 0.5
    elif node.kind == "list":
        assert node.item is not None
        items = TList(_draw(node.item, rng, drawn, length) for _ in range(length))
        items._node = node
        return items
    elif node.open:
        assert node.item is not None
        keys = rng.sample(node.constants, min(length, len(node.constants))) or [_text(node, rng)]
        return Row(node, {key: _draw(node.item, rng, drawn, length) for key in keys})
    else:  # a dict: the fields that take other columns' values are drawn last
        order = sorted(node.fields, key=lambda key: any(n.peers for n in node.fields[key].walk()))
        values = {key: _draw(node.fields[key], rng, drawn, length) for key in order}
        return Row(node, {key: values[key] for key in node.fields})
    return _keep(node, value, drawn)


def _keep(node: Node, value: Any, drawn: dict[int, list[Any]]) -> Any:
    drawn.setdefault(id(node), []).append(value)
    return _tracked(value, node)


def _plain(value: Any) -> Any:
    """The JSON value behind a drawn value."""
    if isinstance(value, bool) or not isinstance(value, (str, int, dict, list, tuple)):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in dict.items(value)}
    return [_plain(item) for item in value]


def _copy(value: Any) -> Any:
    """A fresh copy of a drawn value (a prompt function may change the row it is given)."""
    if isinstance(value, Row):
        return Row(value._node, {key: _copy(item) for key, item in dict.items(value)})
    if isinstance(value, TList):
        items = TList(_copy(item) for item in value)
        items._node = value._node
        return items
    return value


# calling the prompt function ---------------------------------------------------------------


class Dropped(Exception):
    """The prompt function drops too many rows: a failure, like an exception."""


class Rejected(Exception):
    """A row the task does not want: its hf_filter drops it, or its doc's golds do not index
    its choices. Drawn again; accepted when nothing better can be drawn."""


@contextlib.contextmanager
def _decoders() -> Iterator[None]:
    """`json.loads` and `ast.literal_eval` of a drawn str give its decoded value, probed."""
    originals = json.loads, ast.literal_eval

    def decoding(original: Any, encoding: str) -> Any:
        def decode(text: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(text, TStr) or text._node.encoding not in (None, encoding):
                return original(text, *args, **kwargs)
            node = text._node
            if node.encoding != encoding:
                node.encoding, node.item = encoding, Node(depth=node.depth)
                _learned()
            return _copy(text.decoded)

        return decode

    json.loads = decoding(json.loads, "json")
    ast.literal_eval = decoding(ast.literal_eval, "literal")
    try:
        yield
    finally:
        json.loads, ast.literal_eval = originals


def _escaped(value: Any, depth: int = 0) -> list[Probe]:
    """Probes the prompt function put in its doc without using them."""
    if isinstance(value, Probe):
        return [value]
    if isinstance(value, dict):
        value = list(dict.values(value))
    if isinstance(value, (list, tuple)) and depth < 4:
        return [probe for item in value for probe in _escaped(item, depth + 1)]
    return []


def _check(doc: Any) -> None:
    """Reject a doc lighteval's pipeline could not use as a prompt: a query or instruction
    that is no text, golds that do not index the choices, choices that are no text."""
    if doc is None or doc == []:
        return
    if not isinstance(getattr(doc, "query", None), str):
        raise Rejected("the query is no text")
    if not isinstance(getattr(doc, "instruction", None), (str, type(None))):
        raise Rejected("the instruction is no text")
    choices, gold = getattr(doc, "choices", None), getattr(doc, "gold_index", None)
    golds = gold if isinstance(gold, (list, tuple)) else [gold]
    if not golds:
        raise Rejected("no gold index")
    if not isinstance(choices, (list, tuple, str)):
        return
    if not all(isinstance(g, int) and not isinstance(g, bool) and 0 <= g < len(choices)
               for g in golds):  # fmt: skip
        raise Rejected(f"gold index {gold!r} does not index {len(choices)} choices")
    text = [choice if isinstance(choice, list) else [choice] for choice in choices]
    if not all(isinstance(alias, str) for aliases in text for alias in aliases):
        raise Rejected(f"choices {choices!r} are not text (or lists of text)")


def _call(config: Any, row: Row, index: int, strict: bool) -> bool:
    """Run hf_filter and the prompt function (on an evaluation and a few-shot row); whether
    it made a doc (not None: the row is dropped)."""
    dropped = False
    with _decoders():
        if config.hf_filter is not None and not config.hf_filter(_copy(row)) and strict:
            raise Rejected("hf_filter drops the row")
        for few_shots in (False, True):
            line = _copy(row)
            line["__few_shots"], line["__index"] = few_shots, index
            doc = config.prompt_function(line, config.name)
            _settle_escaped(doc)
            if strict:
                _check(doc)
            dropped = dropped or doc is None or doc == []
    return not dropped


def _settle_escaped(doc: Any) -> None:
    """Probes put in the doc without being used take the type of the field they are in: a
    `gold_index` is an int, `choices` a list of str, any other field a str."""
    schema = Recorder.current.schema  # type: ignore[union-attr]
    escaped = False
    for name in ("query", "choices", "gold_index", "instruction", "specific"):
        value = getattr(doc, name, None)
        if name in ("gold_index", "choices") and isinstance(value, Probe):
            value._node.settle("int" if name == "gold_index" else "list", schema)
            escaped = True
        for probe in _escaped(value):
            probe._node.settle("int" if name == "gold_index" else "str", schema)
            escaped = True
    if escaped:
        raise Learned


def _constants_near(exc: BaseException, lookup: str) -> list[Any]:
    """Strings and ints a failed lookup may want, from the code where it failed: for a `key`
    (`TABLE[x]`), the keys of the tables that code holds or names; for an `item`
    (`["A", "B"].index(x)`, `ascii_uppercase.index(x)`), the items of its sequences and the
    letters of its alphabets."""
    found: list[Any] = []
    for frame in _frames(exc)[:2]:
        code, namespace = frame.f_code, frame.f_globals
        values = [value for value in frame.f_locals.values() if not isinstance(value, Row)]
        codes = [code]
        while codes:
            current = codes.pop()
            codes += [const for const in current.co_consts if isinstance(const, types.CodeType)]
            values += [const for const in current.co_consts if isinstance(const, (tuple, str))]
            named = [namespace[name] for name in current.co_names if name in namespace]
            modules = [value for value in named if isinstance(value, types.ModuleType)]
            names = current.co_names  # `string.ascii_uppercase`
            values += named + [getattr(m, n) for m in modules for n in names if hasattr(m, n)]
        for value in values:
            if isinstance(value, dict):
                found += [key for key in value if _scalar(key)]
            elif isinstance(value, (set, frozenset)):
                found += sorted((item for item in value if _scalar(item)), key=repr)
            elif isinstance(value, (list, tuple)):
                found += [item for item in value if _scalar(item)]  # dict literal keys: tuples
            elif isinstance(value, str) and lookup == "item" and _alphabet(value):
                found[:0] = list(value)  # first: `ascii_uppercase.index(x)` is the usual case
    return found


def _alphabet(text: str) -> bool:
    """`ABCD`, `abc`, `0123`: consecutive characters."""
    return len(text) > 1 and all(ord(b) - ord(a) == 1 for a, b in itertools.pairwise(text))


def _frames(exc: BaseException) -> list[types.FrameType]:
    """The frames `exc` went through, innermost first, outside this module."""
    frames, tb = [], exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return [frame for frame in reversed(frames) if frame.f_code.co_filename != __file__]


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


# the synthesizer ---------------------------------------------------------------------------


@dataclass
class Synthesis:
    """Rows by split, or why none could be made."""

    splits: dict[str, list[dict[str, Any]]]
    error: str | None = None


def splits_read(config: Any) -> list[str]:
    """The evaluation splits and the few-shot split(s), as our engine chooses them."""
    from pytest_evaltasks.engine.task import first_fewshot_split

    evaluation = list(config.evaluation_splits)
    chosen = config.few_shots_split
    if isinstance(chosen, str) and chosen:
        pool = [chosen]
    elif isinstance(chosen, (list, tuple)) and chosen:
        pool = list(chosen)
    else:
        found = first_fewshot_split(list(config.hf_avail_splits or []), evaluation)
        pool = [found] if found else []
    return list(dict.fromkeys([*evaluation, *pool]))


@dataclass
class _Progress:
    """Rows made with one version of the schema."""

    version: int
    made: dict[str, list[dict[str, Any]]]
    docs: int = 0
    dropped: int = 0
    failures: float = 0
    rejections: int = 0
    lenient: bool = False
    """Nothing the task wants could be drawn: rows it rejects are taken."""


def synthesize(config: Any, rows: int = ROWS, seed: int | None = None) -> Synthesis:
    """`rows` rows for each split `config` reads, made from what its prompt function does."""
    with _global_generators_seeded():  # prompt functions that draw (gpqa) draw the same
        return _synthesize(config, rows, corpus_seed() if seed is None else seed)


@contextlib.contextmanager
def _global_generators_seeded() -> Iterator[None]:
    numpy = sys.modules.get("numpy")
    saved = random.getstate(), numpy.random.get_state() if numpy else None
    random.seed(1234)
    if numpy:
        numpy.random.seed(1234)
    try:
        yield
    finally:
        random.setstate(saved[0])
        if numpy:
            numpy.random.set_state(saved[1])


def _synthesize(config: Any, rows: int, seed: int) -> Synthesis:
    rng = random.Random(f"{seed}:{config.name}")
    names = re.split(r"[^A-Za-z0-9]+", f"{config.name} {config.hf_subset or ''}")
    schema, splits = Schema(words=sorted(set(filter(None, names)))), splits_read(config)
    state, error = _Progress(-1, {}), "no row was tried"
    for _attempt in range(60 * rows * len(splits)):
        if state.version != schema.version:  # the columns changed: rows made so far are stale
            state = _Progress(schema.version, {split: [] for split in splits})
        todo = [split for split in splits if len(state.made[split]) < rows]
        if not todo:
            return Synthesis(state.made)
        recorder = Recorder.current = Recorder(schema)
        try:
            row = _draw(schema.root, rng, {}, rng.choice((2, 3, 4, 4, 5)))
            made_doc = _call(config, row, len(state.made[todo[0]]), strict=not state.lenient)
            if not made_doc and state.dropped >= rows // 4 and not state.lenient:
                raise Dropped("the prompt function drops every row (returns None)")
        except Learned:
            continue
        except Rejected as exc:
            recorder.score(worked=False)
            error = error if state.failures else str(exc)
            state.rejections += 1
            state.lenient = state.rejections >= 100 and not state.docs
            continue
        except (Exception, SystemExit) as exc:  # any failure of the task's code is evidence
            recorder.score(worked=False)
            error = f"{type(exc).__name__}: {exc}"
            if isinstance(exc, ImportError):  # no row helps a task that needs another package
                break
            state.failures += 0.5 if isinstance(exc, Dropped) else 1  # dropped: maybe unlucky
            _learn_from(exc, recorder)
            if state.failures >= 30 and not state.docs:  # it never worked: a wrong type
                _change_a_type(suspects(exc, recorder), schema)
            continue
        finally:
            Recorder.current = None
        recorder.score(worked=made_doc)
        for node in schema.root.walk():
            node.settle("str", schema)  # read but never used: any text will do
        if schema.version == state.version:
            state.made[todo[0]].append(_plain(row))
            state.docs += made_doc
            state.dropped += not made_doc
    return Synthesis({}, error=error)


def _learn_from(exc: BaseException, recorder: Recorder) -> None:
    """What a failed call tells: an unused probe went to code that wants a str (`re.sub`); a
    key missing from a copy of the row is a column; a failed lookup (`TABLE[x]`,
    `"ABCD".index(x)`) wants one of the function's own constants."""
    schema = recorder.schema
    for probe in recorder.probes:
        probe._node.settle("str", schema)
    key = exc.args[0] if isinstance(exc, KeyError) and exc.args else None
    if type(key) is str and not key.startswith("__") and _a_copy_of_the_row(exc, schema):
        schema.root.fields[key] = Node()  # `{k: v for k, v in line.items()}["input"]`
        schema.version += 1
    if recorder.news or not isinstance(exc, (KeyError, ValueError)):
        return
    for node in [key._node] if isinstance(key, (TStr, TInt)) else suspects(exc, recorder):
        if node.kind not in ("str", "int") or node.encoding:
            continue
        if not node.widened:  # once: later failures are unlucky draws
            node.widened = True
            found = _constants_near(exc, "key" if isinstance(exc, KeyError) else "item")
            wanted = str if node.kind == "str" else int
            found = [c for c in found if type(c) is wanted][:100]
            node.constants = list(dict.fromkeys([*node.constants, *found]))
        return


def _a_copy_of_the_row(exc: BaseException, schema: Schema) -> bool:
    """Whether `exc` was raised where a plain dict holding the row's columns is at hand."""
    frames = _frames(exc)
    columns = set(schema.root.fields)
    return bool(frames) and any(
        type(value) is dict and ("__index" in value or (columns and columns <= value.keys()))
        for value in frames[0].f_locals.values()
    )


def suspects(exc: BaseException, recorder: Recorder) -> list[Node]:
    """The columns most likely to blame for `exc`, most likely first. A failed lookup
    (`TABLE[line["x"]]`) blames the column read last; a type error, the drawn values in the
    innermost frame that holds any (`word` in `capitalize(word)`)."""
    touched = list(reversed(recorder.touched))
    if isinstance(exc, (KeyError, ValueError)):
        return touched
    for frame in _frames(exc):
        held = [v._node for v in frame.f_locals.values() if isinstance(v, (TStr, TInt, TList))]
        if held:
            return [*held, *touched]
    return touched


def _change_a_type(suspected: list[Node], schema: Schema) -> None:
    """Give the likeliest column that has a type left its next type (and its linked ones)."""
    for node in [*suspected, *schema.root.walk()]:
        if node is not schema.root and node.next_kind(schema):
            for linked in node.links:
                if linked.kind != node.kind:
                    linked.become(node.kind, schema)
            return


def write(synthesis: Synthesis, root: Path, config: Any) -> Path:
    """Write the rows as `<root>/<hf_repo>/<hf_subset or "default">/<split>.jsonl`."""
    directory: Path = root / config.hf_repo / (config.hf_subset or "default")
    directory.mkdir(parents=True, exist_ok=True)
    for split, rows in synthesis.splits.items():
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (directory / f"{split}.jsonl").write_text(lines, encoding="utf-8")
    return directory
