"""Port declarations: pairs of task requests that claim to render the same benchmark.

A project lists its ports in `ports.toml` in its first task folder (beside its task modules):

    [[port]]
    name = "arc_easy"                                  # the item: evaltasks::port:arc_easy
    a = "arc:easy|5"                                   # a task string of the run's folders
    b = { task = "arc_easy|5", dir = "lm_eval:tasks" } # or of a folder of its own
    key = "id"                                         # optional: align docs by this column

Each side is a task string, as `--evaltasks` takes it, of one task; `dir` names the folder that
defines it when that is not one of the run's (`lm_eval:tasks`, `inspect_evals:tasks`, a path
relative to the root). Docs are aligned by their source row (split and row index), or by the
value of the `key` column when one is named. `PortDoc` is what each side's build is compared by:
what the model receives, one plain record per doc, whatever the harness.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EvalTaskError
from .task_string import ALL_PORTS, PORT_PREFIX

PORTS_FILE = "ports.toml"
"""Where a project declares its ports: its first task folder."""

_NAME = re.compile(r"[A-Za-z0-9_.:-]+")


class PortError(EvalTaskError):
    """A port declaration that cannot be read: names the file, the port and the field."""


@dataclass(frozen=True)
class PortSide:
    """One side of a port: a task string and, when not the run's own, the folder defining it."""

    task: str
    folder: str | None = None

    def describe(self) -> str:
        """`arc_easy|5 (lm_eval:tasks)`, as records and messages name the side."""
        return f"{self.task} ({self.folder})" if self.folder else self.task


@dataclass(frozen=True)
class Port:
    """A declared port: its name, its two sides and how their docs are aligned."""

    name: str
    a: PortSide
    b: PortSide
    key: str | None = None

    @property
    def item_name(self) -> str:
        return PORT_PREFIX + self.name

    @property
    def alignment(self) -> str:
        """How docs are paired, as the record says it."""
        return f"by the {self.key!r} column" if self.key else "by split and row index"


@dataclass(frozen=True)
class PortDoc:
    """One evaluated doc as a port compares it: what the model receives, and where it came from.

    `row` is the doc's source row (`test/12`: its split and row index) and `key` the value of the
    port's key column, when the side can give it. Few-shot examples are named by their rows too;
    None where a side cannot say (its harness writes them into the prompt without a row)."""

    row: str
    prompt: str
    choices: tuple[str, ...] = ()
    target: str = ""
    fewshot_rows: tuple[str, ...] | None = None
    stops: tuple[str, ...] = ()
    max_tokens: int | None = None
    chat: str | None = None
    key: str | None = None
    generates: bool = False
    """The model generates (stop sequences and a length end it), rather than scores choices."""
    columns: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)
    """The source row's columns, where a side keeps them: what a key is read from."""


def read_ports(folder: Path) -> list[Port]:
    """The ports `folder/ports.toml` declares; none when there is no such file."""
    path = folder / PORTS_FILE
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PortError(f"{path}: not valid TOML ({exc}); fix the file") from None
    entries = data.get("port", [])
    unknown = sorted(set(data) - {"port"})
    if unknown or not isinstance(entries, list):
        raise PortError(
            f"{path}: expected only [[port]] tables, found {', '.join(unknown) or 'port = ...'}"
        )
    ports: list[Port] = []
    for number, entry in enumerate(entries, start=1):
        port = _port(entry, f"{path}: port {number}")
        if any(other.name == port.name for other in ports):
            raise PortError(f"{path}: two ports are named {port.name!r}; rename one")
        ports.append(port)
    return ports


def _port(entry: Any, where: str) -> Port:
    """One `[[port]]` table, checked field by field."""
    if not isinstance(entry, dict):
        raise PortError(f"{where}: expected a table")
    unknown = sorted(set(entry) - {"name", "a", "b", "key"})
    if unknown:
        raise PortError(
            f"{where}: unknown field {unknown[0]!r}; a port has name, a, b and an optional key"
        )
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PortError(
            f"{where}: `name` must be a word of letters, digits and _.:- (got {name!r}): it "
            f"names the item, evaltasks::port:NAME"
        )
    key = entry.get("key")
    if key is not None and (not isinstance(key, str) or not key):
        raise PortError(f"{where} ({name}): `key` must name a column (got {key!r})")
    return Port(name, _side(entry.get("a"), f"{where} ({name}), a"),
                _side(entry.get("b"), f"{where} ({name}), b"), key)  # fmt: skip


def _side(value: Any, where: str) -> PortSide:
    """A side: a task string, or `{task = ..., dir = ...}`."""
    if isinstance(value, str) and value.strip():
        return PortSide(value.strip())
    if isinstance(value, dict):
        task, folder = value.get("task"), value.get("dir")
        unknown = sorted(set(value) - {"task", "dir"})
        if unknown:
            raise PortError(f"{where}: unknown field {unknown[0]!r}; a side has task and dir")
        if isinstance(task, str) and task.strip() and (folder is None or isinstance(folder, str)):
            return PortSide(task.strip(), folder or None)
    raise PortError(
        f'{where}: expected a task string ("arc:easy|5") or a table '
        f'({{ task = "arc_easy|5", dir = "lm_eval:tasks" }}), got {value!r}'
    )


def split_port_specs(specs: list[str]) -> tuple[list[str], list[str]]:
    """Task strings without their port parts (`port:NAME`, `ports`), and the port names asked
    for (`ports` as itself): the registry never sees a port."""
    tasks: list[str] = []
    ports: list[str] = []
    for spec in specs:
        parts = _top_level_parts(spec)
        wanted = [p.strip() for p in parts if _is_port(p.strip())]
        if not wanted:
            tasks.append(spec)
            continue
        ports += [ALL_PORTS if p == ALL_PORTS else p[len(PORT_PREFIX) :] for p in wanted]
        rest = [p for p in parts if not _is_port(p.strip())]
        if any(p.strip() for p in rest):
            tasks.append(",".join(rest))
    return tasks, ports


def _is_port(part: str) -> bool:
    return part == ALL_PORTS or part.startswith(PORT_PREFIX)


def _top_level_parts(spec: str) -> list[str]:
    """A task string split at its commas outside brackets and quotes (`@k=[1, 2]` stays)."""
    parts: list[str] = []
    depth, quote, start = 0, "", 0
    for index, char in enumerate(spec):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(spec[start:index])
            start = index + 1
    parts.append(spec[start:])
    return parts


def select_ports(declared: list[Port], wanted: list[str], everything: bool) -> list[Port]:
    """The declared ports a run asks for, in declaration order; an unknown name is an error
    naming the declared ones."""
    from ..errors import TaskStringError, did_you_mean

    names = {port.name for port in declared}
    for name in wanted:
        if name != ALL_PORTS and name not in names:
            known = ", ".join(sorted(names)) or f"none: declare ports in {PORTS_FILE}"
            raise TaskStringError(
                f"unknown port {PORT_PREFIX}{name}{did_you_mean(name, sorted(names))}; "
                f"declared ports: {known}"
            )
    if everything or ALL_PORTS in wanted:
        return list(declared)
    return [port for port in declared if port.name in wanted]
