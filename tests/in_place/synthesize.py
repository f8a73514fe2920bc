"""Synthetic dataset rows for any task config, derived from its prompt function's behaviour.

Nothing here knows a task. The columns are found by probing: the prompt function (and the
config's `hf_filter`) is called on a row whose missing keys answer with a `Probe`, and each use
of a probe tells the type of its column (indexed by a number or iterated: a list; `int()` or
used as an index: an int; a string method: a str; indexed by a string: a nested dict; compared
with a literal: that literal's type). Known columns then hold real values that remember their
column, so comparisons show which values a column may take (a literal it is compared with, or
another column's values: `labels.index(answer)` makes `answer` one of the row's labels), and
rows that still fail are drawn again. A column whose type keeps failing tries the next type.

Rows vary (words, whitespace, list lengths, labels), and everything is drawn from one
`random.Random`, so rows are reproducible for a seed: `EVALTASKS_CORPUS_SEED`.
"""

from __future__ import annotations

import functools
import json
import os
import random
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_SEED = 20240613
ROWS = 8
KINDS = ("str", "int", "list", "dict", "float", "bool")
"""Types a column may take, in the order they are tried."""
WORDS = (
    "apple river stone cloud garden lamp window orbit meadow copper violet harbor "
    "lantern pebble summit thistle ember quartz willow falcon canyon maple tundra "
    "delta prism cobalt saffron juniper ridge marble"
).split()
DICT_METHODS = {"keys", "values", "items", "get", "setdefault", "update", "pop"}


def corpus_seed() -> int:
    """The seed of every synthesized row and sample: `EVALTASKS_CORPUS_SEED`, or a fixed one."""
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
    fields: dict[str, Node] = field(default_factory=dict)
    constants: list[Any] = field(default_factory=list)
    """Literals its values were compared with: candidates for them."""
    peers: list[Node] = field(default_factory=list)
    """Columns whose values (in the same row) its values were compared with."""
    widened: bool = False
    """Whether the prompt function's own constants were added to `constants`."""

    def settle(self, kind: str, schema: Schema) -> None:
        """Give an unknown node its first type."""
        if self.kind == "?":
            self.become(kind, schema)

    def become(self, kind: str, schema: Schema) -> None:
        self.kind = kind
        self.tried.append(kind)
        self.item = Node(depth=self.depth + 1) if kind == "list" else None
        self.fields = {}
        self.constants, self.peers, self.widened = [], [], False
        schema.version += 1

    def next_kind(self, schema: Schema) -> bool:
        """Try the next type; False when every type was tried."""
        left = [kind for kind in KINDS if kind not in self.tried]
        if not left:
            return False
        self.become(left[0], schema)
        return True

    def walk(self) -> list[Node]:
        nodes = [self]
        for child in [*self.fields.values(), *([self.item] if self.item else [])]:
            nodes += child.walk()
        return nodes


@dataclass(eq=False)
class Schema:
    root: Node = field(default_factory=lambda: Node("dict"))
    version: int = 0


class Learned(BaseException):
    """A probe learned its type: the call is abandoned and made again (never caught by the
    prompt function's own `except Exception`)."""


class Recorder:
    """What one call of the prompt function revealed."""

    current: Recorder | None = None

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.touched: list[Node] = []
        self.probes: list[Probe] = []
        self.news = 0

    def compared(self, node: Node, other: Any) -> None:
        """`node`'s value was compared for equality with `other`."""
        peer = getattr(other, "_node", None)
        if isinstance(other, (TStr, TInt)) and peer is not node:
            # the one in fewer lists (a scalar answer among list items) takes the other's values
            dependent, source = (node, peer) if node.depth <= peer.depth else (peer, node)
            if source not in dependent.peers and dependent is not source:
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
        Recorder.current.touched.append(node)
        Recorder.current.compared(node, other)


# values that remember their column ---------------------------------------------------------


class TStr(str):
    """A str that records equality comparisons (and keeps its column through case and
    whitespace changes, as filters compare `x["subject"].lower()`)."""

    _node: Node

    def __eq__(self, other: object) -> bool:
        _record(self._node, other)
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        _record(self._node, other)
        return str.__ne__(self, other)

    __hash__ = str.__hash__


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


class Row(dict):  # type: ignore[type-arg]
    """A row (or nested dict) whose unknown keys become new columns, answering with probes."""

    def __init__(self, node: Node, values: dict[str, Any]) -> None:
        super().__init__(values)
        self._node = node

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        node = self._node.fields.get(key)
        if node is not None and Recorder.current is not None:
            Recorder.current.touched.append(node)
        return value

    def __missing__(self, key: Any) -> Any:
        if not isinstance(key, str) or key.startswith("__"):
            raise KeyError(key)
        return self._new(key, "?")

    def get(self, key: Any, default: Any = None) -> Any:
        if key in self or not isinstance(key, str) or key.startswith("__"):
            return super().get(key, default)
        kind = _kind_of(default) if default is not None else "?"
        return self._new(key, kind or "?")

    def _new(self, key: str, kind: str) -> Any:
        recorder = Recorder.current
        assert recorder is not None
        node = self._node.fields[key] = Node(depth=self._node.depth)
        if kind != "?":
            node.become(kind, recorder.schema)
            raise Learned
        recorder.schema.version += 1
        return Probe(node)


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

    def _is(self, kind: str | None) -> Any:
        recorder = Recorder.current
        node = object.__getattribute__(self, "_node")
        if recorder is not None and node.kind == "?":
            node.settle(kind or "str", recorder.schema)
        raise Learned

    def __repr__(self) -> str:
        return "<probe>"

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in DICT_METHODS:
            return self._is("dict")
        return self._is("str" if hasattr(str, name) or not hasattr(list, name) else "list")

    def __getitem__(self, key: Any) -> Any:
        return self._is({int: "list", str: "dict"}.get(type(key), "str"))

    def __eq__(self, other: object) -> bool:
        node = object.__getattribute__(self, "_node")
        _record(node, other)
        return self._is(_kind_of(other))  # type: ignore[no-any-return]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def _number(self, other: Any = None) -> Any:
        return self._is("float" if isinstance(other, float) else "int")

    def _same(self, other: Any) -> Any:
        return self._is(_kind_of(other) if not isinstance(other, bool) else "int")

    __iter__ = __len__ = __reversed__ = lambda self: self._is("list")  # noqa: E731
    __int__ = __index__ = __invert__ = __neg__ = __abs__ = lambda self: self._is("int")  # noqa: E731
    __float__ = __round__ = lambda self, *args: self._is("float")  # noqa: E731
    __str__ = __hash__ = __contains__ = __bool__ = lambda self, *args: self._is("str")  # noqa: E731
    __format__ = __mod__ = lambda self, *args: self._is("str")  # noqa: E731
    __lt__ = __le__ = __gt__ = __ge__ = __add__ = __radd__ = _same
    __sub__ = __rsub__ = __truediv__ = __rtruediv__ = __floordiv__ = __pow__ = _number
    __mul__ = __rmul__ = lambda self, other: self._is("int")  # noqa: E731
    __rmod__ = lambda self, other: self._is("str" if isinstance(other, str) else "int")  # noqa: E731


# drawing rows ------------------------------------------------------------------------------


def _text(rng: random.Random) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
    words += f" {rng.randint(0, 999)}"  # rows rarely repeat
    shape = rng.random()
    if shape < 0.15:
        return " " + words
    if shape < 0.3:
        return words + "\n"
    if shape < 0.4:
        return words.replace(" ", "\n", 1)
    return words


def _draw(node: Node, rng: random.Random, drawn: dict[int, list[Any]], length: int) -> Any:
    """A value for `node`; `drawn` holds the values already drawn in this row, by node."""
    pool = [*node.constants]
    for peer in node.peers:
        pool += drawn.get(id(peer), [])
    if node.kind in ("str", "int", "float") and pool and rng.random() < 0.8:
        value = rng.choice(pool)
        if node.kind == "float" and isinstance(value, (int, float)):
            value = float(value)
        if _kind_of(value) == node.kind:
            return _keep(node, value, drawn)
    if node.kind == "?":
        return Probe(node)
    if node.kind == "str":
        value = _text(rng)
    elif node.kind == "int":
        value = rng.randrange(length)
    elif node.kind == "float":
        value = rng.randrange(length * 4) / 4
    elif node.kind == "bool":
        value = rng.random() < 0.5
    elif node.kind == "list":
        assert node.item is not None
        return [_draw(node.item, rng, drawn, length) for _ in range(length)]
    else:
        # fields that take other columns' values are drawn last
        order = sorted(node.fields, key=lambda key: any(n.peers for n in node.fields[key].walk()))
        values = {key: _draw(node.fields[key], rng, drawn, length) for key in order}
        return Row(node, {key: values[key] for key in node.fields})
    return _keep(node, value, drawn)


def _keep(node: Node, value: Any, drawn: dict[int, list[Any]]) -> Any:
    drawn.setdefault(id(node), []).append(value)
    return _tracked(value, node)


def _plain(value: Any) -> Any:
    """The JSON value behind a drawn value."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _copy(value: Any) -> Any:
    """A fresh copy of a drawn row (a prompt function may change the row it is given)."""
    if isinstance(value, Row):
        return Row(value._node, {key: _copy(item) for key, item in value.items()})
    if isinstance(value, list):
        return [_copy(item) for item in value]
    return value


# calling the prompt function ---------------------------------------------------------------


class Failed(Exception):
    """A drawn row the prompt function (or hf_filter) does not accept."""


def _escaped(value: Any, seen: int = 0) -> list[Probe]:
    """Probes the prompt function put in its doc unused."""
    if isinstance(value, Probe):
        return [value]
    if seen > 3:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [probe for item in value for probe in _escaped(item, seen + 1)]
    return []


def _check(doc: Any) -> None:
    """Refuse a doc whose golds do not index its choices (lighteval would fail on it)."""
    if doc is None or doc == []:
        return
    choices, gold = getattr(doc, "choices", None), getattr(doc, "gold_index", None)
    if isinstance(choices, (list, tuple)) and choices:
        golds = gold if isinstance(gold, (list, tuple)) else [gold]
        if not golds or not all(
            isinstance(g, int) and not isinstance(g, bool) and 0 <= g < len(choices)
            for g in golds
        ):
            raise Failed(f"gold index {gold!r} does not index {len(choices)} choices")


def _call(config: Any, row: Row, index: int) -> Any:
    """Run hf_filter and the prompt function (as evaluation and as few-shot row) on `row`."""
    if config.hf_filter is not None and not config.hf_filter(_copy(row)):
        raise Failed("hf_filter rejects the row")
    doc = None
    for few_shots in (False, True):
        line = _copy(row)
        line["__few_shots"], line["__index"] = few_shots, index
        doc = config.prompt_function(line, config.name)
        fields = [getattr(doc, name, None) for name in ("query", "choices", "gold_index")]
        fields += [getattr(doc, name, None) for name in ("instruction", "specific")]
        escaped = _escaped(fields)
        if escaped:
            for probe in escaped:
                probe._node.settle("str", Recorder.current.schema)  # type: ignore[union-attr]
            raise Learned
        _check(doc)
    return doc


def _own_constants(function: Any, depth: int = 0) -> list[Any]:
    """Strings and ints the prompt function can reach: its literals, the keys and items of
    the tables it names, the characters of short literal alphabets (`"ABCD".index(x)`)."""
    found: list[Any] = []
    if isinstance(function, functools.partial):
        found += [a for a in (*function.args, *function.keywords.values()) if _scalar(a)]
        return found + _own_constants(function.func, depth)
    code = getattr(function, "__code__", None)
    if code is None or depth > 2:
        return found
    names = getattr(function, "__globals__", {})
    cells = [cell.cell_contents for cell in (function.__closure__ or ()) if _filled(cell)]
    codes = [code]
    while codes:
        current = codes.pop()
        for const in current.co_consts:
            if isinstance(const, types.CodeType):
                codes.append(const)
            elif _scalar(const):
                found.append(const)
        cells += [names[name] for name in current.co_names if name in names]
    for value in cells:
        if isinstance(value, dict):
            found += [key for key in value if _scalar(key)]
        elif isinstance(value, (list, tuple, set, frozenset)):
            found += [item for item in value if _scalar(item)]
        elif isinstance(value, str) and len(value) <= 64:
            found += [value, *value] if value.isalnum() else [value]
        elif callable(value) and not isinstance(value, type):
            found += _own_constants(value, depth + 1)
    return found


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


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


def synthesize(config: Any, rows: int = ROWS, seed: int | None = None) -> Synthesis:
    """`rows` rows for each split `config` reads, accepted by its prompt function."""
    rng = random.Random(f"{corpus_seed() if seed is None else seed}:{config.name}")
    schema = Schema()
    constants = None
    splits = splits_read(config)
    made: dict[str, list[dict[str, Any]]] = {split: [] for split in splits}
    version, stuck, error, attempts = schema.version, 0, "no row was tried", 0
    while attempts < 150 * rows * len(splits):
        if schema.version != version:  # the columns changed: rows drawn so far are stale
            made = {split: [] for split in splits}
            version, stuck = schema.version, 0
        todo = [split for split in splits if len(made[split]) < rows]
        if not todo:
            return Synthesis(made)
        split = todo[0]
        attempts += 1
        recorder = Recorder.current = Recorder(schema)
        try:
            drawn: dict[int, list[Any]] = {}
            row = _draw(schema.root, rng, drawn, rng.choice((2, 3, 4, 4, 5)))
            _call(config, row, len(made[split]))
        except Learned:
            continue
        except Exception as exc:  # noqa: BLE001 - any failure of the task's code is evidence
            error = f"{type(exc).__name__}: {exc}"
            if constants is None and isinstance(exc, (KeyError, ValueError, IndexError)):
                constants = [_plain(value) for value in _own_constants(config.prompt_function)]
                if config.hf_filter is not None:
                    constants += [_plain(value) for value in _own_constants(config.hf_filter)]
            unused = [p._node for p in recorder.probes if p._node.kind == "?"]
            for node in unused:  # handed to code that wants a str (json.loads, re.sub)
                node.settle("str", schema)
            stuck = 0 if recorder.news else stuck + 1
            if recorder.news or unused:
                continue
            widened = _widen(recorder, constants)
            if not widened and stuck >= 8:
                _change_a_type(recorder, schema)
                stuck = 0
            continue
        finally:
            Recorder.current = None
        unknown = [node for node in schema.root.walk() if node.kind == "?"]
        for node in unknown:  # read but never used: any text will do
            node.settle("str", schema)
        if schema.version == version:
            made[split].append(_plain(row))
    return Synthesis({}, error=error)


def _widen(recorder: Recorder, constants: list[Any] | None) -> bool:
    """Offer the function's own constants to the last scalar column it used."""
    for node in reversed(recorder.touched or _scalars(recorder.schema.root)):
        if node.kind in ("str", "int") and not node.widened and constants:
            node.widened = True
            wanted = str if node.kind == "str" else int
            node.constants += [c for c in dict.fromkeys(constants) if type(c) is wanted]
            return True
    return False


def _scalars(root: Node) -> list[Node]:
    return [node for node in root.walk() if node.kind in ("str", "int")]


def _change_a_type(recorder: Recorder, schema: Schema) -> None:
    """Give the most recently used column that has a type left to try its next type."""
    candidates = recorder.touched or [n for n in schema.root.walk() if n is not schema.root]
    for node in reversed(candidates):
        if node is not schema.root and node.next_kind(schema):
            return


def write(synthesis: Synthesis, root: Path, config: Any) -> Path:
    """Write the rows as `<root>/<hf_repo>/<hf_subset or "default">/<split>.jsonl`."""
    directory = root / config.hf_repo / (config.hf_subset or "default")
    directory.mkdir(parents=True, exist_ok=True)
    for split, rows in synthesis.splits.items():
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (directory / f"{split}.jsonl").write_text(lines, encoding="utf-8")
    return directory
