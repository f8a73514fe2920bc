"""Parse the task-string language: `name`, `name|5`, `suite|name|5`, `name@k=v|5`, or a file.

Parsing is purely syntactic; whether a name is registered is the registry's business.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TaskStringError

ALL_TASKS = "all"
"""The task string that means every registered task, at 0 shots (resolved by the registry)."""

ALL_PORTS = "ports"
"""The task string that means every declared port."""

PORT_PREFIX = "port:"
"""A port's item name and task-string form: `port:arc_easy`."""

RESERVED = (",", "|", "@")
"""Characters with a meaning in task strings: a task name holding one could never be requested."""

ACCEPTED_FORMS = (
    "accepted forms: 'task', 'task|N' (N = few-shot count, an integer >= 0), "
    "'task@param=value|N' (value a Python literal, e.g. @k=5 or @name='x'), "
    "a comma-separated list of these, or the path of a file with one per line"
)


UNRESOLVED_SHOTS = -1
"""The shot count a request's key holds while its source's default is not yet known."""


@dataclass(frozen=True)
class TaskRequest:
    """One parsed item of a task string: which task, how many shots, which metric parameters."""

    name: str
    num_fewshots: int = 0
    metric_params: tuple[tuple[str, Any], ...] = field(default=())
    item: str = ""
    default_shots: bool = field(default=False, compare=False)
    """The task string named no shot count (`name`, not `name|N`): a source whose tasks carry
    a default of their own (lm-eval's `num_fewshot`) resolves it to that; otherwise 0 shots."""

    @property
    def params_dict(self) -> dict[str, Any]:
        """The `@k=v` metric parameters as a dict, in the order given."""
        return dict(self.metric_params)

    @property
    def key(self) -> tuple[str, int, str]:
        """Identity used for de-duplication; parameters compare by their repr so lists work. A
        request that named no shot count is its own until its source resolves it (`-1`): for
        lm-eval `name` means the YAML's own count, which `name|0` does not."""
        shots = UNRESOLVED_SHOTS if self.default_shots else self.num_fewshots
        return (self.name, shots, repr(self.metric_params))

    @property
    def label(self) -> str:
        """`name@k=v|n`: the task string that reproduces this request, parameters included.

        It names the pytest item and the snapshot; `parse_label` reads it back.
        """
        params = "".join(f"@{key}={value!r}" for key, value in self.metric_params)
        return f"{self.name}{params}|{self.num_fewshots}"

    @property
    def full_name(self) -> str:
        """`name|n`, as lighteval names a task run (metric parameters are not part of it)."""
        return f"{self.name}|{self.num_fewshots}"

    def for_task(self, name: str) -> TaskRequest:
        """This request applied to one member of a superset."""
        return TaskRequest(
            name, self.num_fewshots, self.metric_params, self.item, self.default_shots
        )

    def with_shots(self, num_fewshots: int) -> TaskRequest:
        """This request at a resolved shot count (a source's default for `name` alone)."""
        return TaskRequest(self.name, num_fewshots, self.metric_params, self.item)


_UNWRITABLE = re.compile(
    rf"[,|@]|^\s|\s$|^$|^(?:{ALL_TASKS}|{ALL_PORTS})$|^{re.escape(PORT_PREFIX)}"
)


def unwritable(name: str) -> str | None:
    """Why no task string can name `name`, or None when one can."""
    if _UNWRITABLE.search(name) is None:
        return None  # the usual case, in one regular-expression search
    if not name.strip():
        return "is empty"
    if name != name.strip():
        return "starts or ends with whitespace"
    reserved = [char for char in RESERVED if char in name]
    if reserved:
        return f"contains {', '.join(map(repr, reserved))}, which task strings use as separators"
    if name == ALL_TASKS:
        return f"is {ALL_TASKS!r}, which task strings use for every task"
    if name == ALL_PORTS or name.startswith(PORT_PREFIX):
        return f"is {name!r}, which task strings use for ports ({ALL_PORTS}, {PORT_PREFIX}NAME)"
    return None


def parse_label(label: str) -> TaskRequest:
    """Read back a `TaskRequest.label` (as recorded in a snapshot or shown as a node id)."""
    return parse_task_item(label)


def parse_task_string(spec: str) -> list[TaskRequest]:
    """Parse a comma-separated task string, or a file of task strings, into requests.

    Duplicates are dropped keeping the first occurrence, so the order is the order written.
    """
    items = _read_items(spec)
    if not items:
        raise TaskStringError(f"empty task string {spec!r}; {ACCEPTED_FORMS}")
    requests: list[TaskRequest] = []
    seen: set[tuple[str, int, str]] = set()
    for item in items:
        request = parse_task_item(item)
        if request.key not in seen:
            seen.add(request.key)
            requests.append(request)
    return requests


def _read_items(spec: str) -> list[str]:
    """Split `spec` into items; read it as a file only when it is the path of an existing file.

    Commas and `|` inside a parameter value (`@k=[1,2]`, `@sep='a|b'`) do not split. In a file,
    `#` starts a comment, on its own line or after an item.
    """
    stripped = spec.strip()
    path = _existing_file(stripped)
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TaskStringError(f"cannot read task file {path}: {exc}") from exc
        lines = [_without_comment(line).strip() for line in text.splitlines()]
        return [part.strip() for line in lines if line for part in split_outside(line, ",")]
    if _looks_like_a_file(stripped):
        raise TaskStringError(
            f"no such task-list file: {stripped!r} (a task string is read from a file only when "
            f"it is the path of an existing file); check the path, or {ACCEPTED_FORMS}"
        )
    return [part.strip() for part in split_outside(spec, ",")]


def _looks_like_a_file(text: str) -> bool:
    """A path-like task string: it names a list file, not a task. A `/` alone does not make a
    path (Inspect's tasks are named `inspect_evals/gsm8k`): a list file's name, a path that
    starts as one does (`./`, `../`, `/`, `~`), or one whose folder exists does."""
    if not text or "|" in text or "," in text or "@" in text:
        return False
    if text.endswith((".txt", ".list", ".tasks")) or text.startswith(("./", "../", "/", "~")):
        return True
    if "/" not in text and "\\" not in text:
        return False
    try:
        return Path(text).parent.is_dir()
    except (OSError, ValueError):
        return False


def _without_comment(line: str) -> str:
    """A line up to a `#` that starts a comment (at the start, or after a space)."""
    for position in range(len(line)):
        starts = line[position] == "#" and (position == 0 or line[position - 1].isspace())
        if starts and not _inside_quotes(line[:position]):
            return line[:position]
    return line


def _inside_quotes(text: str) -> bool:
    """Whether the end of `text` is inside a quoted string."""
    quote: str | None = None
    for char in text:
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
    return quote is not None


def split_outside(text: str, separator: str) -> list[str]:
    """Split at `separator`, except inside brackets or quotes (parameter values)."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    for position, char in enumerate(text):
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == separator and depth == 0:
            parts.append(text[start:position])
            start = position + 1
    parts.append(text[start:])
    return parts


def _existing_file(text: str) -> Path | None:
    """`text` as a path when a file exists there (a comma in the path is fine)."""
    if not text:
        return None
    try:
        path = Path(text)
        return path if path.is_file() else None
    except (OSError, ValueError):  # too long for a path, or a NUL byte in it
        return None


def parse_task_item(item: str) -> TaskRequest:
    """Parse one item such as `mmlu:anatomy@k=1|5`."""
    parts = [part.strip() for part in split_outside(item, "|")]
    if len(parts) > 3:
        raise TaskStringError(_too_many_parts(item, parts))
    if len(parts) == 3:
        if parts[1].isdigit() and not parts[2].isdigit():
            raise TaskStringError(_too_many_parts(item, parts))
        if parts[1].isdigit():
            raise TaskStringError(
                f"task {item!r}: read as 'suite|task|N', its task would be {parts[1]!r}; did "
                f"you mean {parts[0] + '|' + parts[1]!r}? (the last part of lighteval's older "
                f"'task|N|truncate' form is not used); {ACCEPTED_FORMS}"
            )
        warnings.warn(
            f"task {item!r}: the 'suite|task|N' form is deprecated and the suite "
            f"{parts[0]!r} is ignored; write '{parts[1]}|{parts[2]}'",
            DeprecationWarning,
            stacklevel=3,
        )
        parts = parts[1:]
    name_part = parts[0]
    num_fewshots = _parse_fewshots(item, parts[1]) if len(parts) == 2 else 0
    name, *param_parts = [piece.strip() for piece in split_outside(name_part, "@")]
    if not name:
        raise TaskStringError(f"task {item!r} has an empty name; {ACCEPTED_FORMS}")
    params = tuple(_parse_param(item, piece) for piece in param_parts if piece)
    return TaskRequest(
        name=name,
        num_fewshots=num_fewshots,
        metric_params=params,
        item=item,
        default_shots=len(parts) == 1,
    )


def _too_many_parts(item: str, parts: list[str]) -> str:
    """The error for more than two `|`, with what the user most likely meant."""
    numbers = [part for part in parts[1:] if part.isdigit()]
    names = [part for part in parts if part and not part.isdigit()]
    guess = f"{names[-1]}|{numbers[0]}" if names and numbers else None
    hint = f"; did you mean {guess!r}?" if guess else ""
    return (
        f"task {item!r} has more than two '|'{hint} (lighteval's older "
        f"'suite|task|N|truncate' form is not supported: the suite and the last part are "
        f"dropped); {ACCEPTED_FORMS}"
    )


def _parse_fewshots(item: str, text: str) -> int:
    """Read the few-shot count; it must be a non-negative integer written in decimal."""
    try:
        value = int(text)
    except ValueError:
        raise TaskStringError(
            f"task {item!r}: few-shot count {text!r} is not an integer; {ACCEPTED_FORMS}"
        ) from None
    if value < 0:
        raise TaskStringError(
            f"task {item!r}: few-shot count {value} is negative; {ACCEPTED_FORMS}"
        )
    return value


def _parse_param(item: str, piece: str) -> tuple[str, Any]:
    """Read one `k=v` metric parameter; `v` is a Python literal, as in lighteval."""
    key, sep, raw = piece.partition("=")
    key = key.strip()
    if not sep or not key:
        raise TaskStringError(
            f"task {item!r}: metric parameter {piece!r} is not of the form key=value; "
            f"{ACCEPTED_FORMS}"
        )
    try:
        value = ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise TaskStringError(
            f"task {item!r}: value {raw!r} of metric parameter {key!r} is not a Python "
            f"literal (quote strings: {key}='{raw}'); {ACCEPTED_FORMS}"
        ) from None
    return key, value
