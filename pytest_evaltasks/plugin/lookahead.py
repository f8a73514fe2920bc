"""The look-ahead process: a fork of the run that checks the last task items while the run
works through the first ones, so a run uses two cores.

pytest runs items one at a time. When the run starts, this module forks the process (the
registry, the data read so far and every module are shared, nothing is imported again). The
child checks the run's task items from the last one backwards, each with the same decision
function the item itself calls (`TaskItem.decide`), and sends back each one it found passing
cleanly. When the run reaches an item the child has already checked, the item takes that
result instead of checking again; every other item checks itself, as without the child.

What keeps the gate whole:

* The child only ever reports a clean pass: a build of the task made in it, judged against the
  same snapshot files by the same code. Anything else (a change, a failure, a file to write, a
  fresh-process build, a warning, a log record, output on stdout or stderr, an exception) makes
  it leave the item alone, and the item then checks itself, so every failure, traceback,
  warning and captured line is the one a run without the child shows.
* In an update run (`--snapshot-update`) every item with a file to write is left to the run, as
  is every failure: the fork only finds the items that keep their snapshot. An item writes its
  own snapshot file alone, which no other item reads.
* It runs only without `--evaltasks-export`, with two usable cores, in a process with no other
  thread (a fork copies one thread only: a library's thread pool, torch's among them, would be
  missing or stuck in the child), no connection opened (an SQLite database or a socket, which
  the child would share with the run) and no tracer (coverage would not see the child's
  work), not under xdist (whose workers already use the cores) and not when debugging.
* It leaves large tasks to the run (a snapshot over 3 MB, about 100,000 docs): two built at
  once would double the run's memory.
* The run never waits for it: an item whose result has not arrived checks itself, and the
  child stops at the first item the run has reached. It is killed when the session ends.

`evaltasks_lookahead = off` (ini) or `--evaltasks-lookahead=off` turns it off.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import mmap
import os
import signal
import struct
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from ..engine.inputs import connections
from .summary import ItemResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    import pytest

    from .context import RunContext

LARGE_SNAPSHOT_BYTES = 3_000_000
"""A snapshot file larger than this (about 100,000 docs: one hash line each) is a large task,
left to the run: two large tasks built at once would double the run's memory."""

MIN_ITEMS = 4
"""Fewer task items than this are checked in the run alone: the fork would cost more than the
work it could take over."""


@dataclass(frozen=True)
class Conditions:
    """What decides whether a run forks a look-ahead process."""

    mode: str
    task_items: int
    export: bool
    xdist_worker: bool
    debugging: bool
    """`--pdb`, `--trace` or `-s`: a prompt function may talk to the terminal."""
    traced: bool
    """A tracer or profiler (coverage, a debugger) watches this process: what the child runs
    would not be seen."""
    can_fork: bool
    cores: int
    threads: int
    connections: tuple[str, ...] = ()
    """Kinds of connection the process opened (an SQLite database, a socket): a forked process
    would share them with the run."""


def refusal(conditions: Conditions) -> str | None:
    """Why the run does not fork a look-ahead process, or None when it does."""
    if conditions.mode == "off":
        return "turned off"
    if conditions.task_items < MIN_ITEMS:
        return f"fewer than {MIN_ITEMS} task items"
    if conditions.export:
        return "--evaltasks-export writes every item's prompts"
    if conditions.xdist_worker:
        return "an xdist worker: the workers already use the cores"
    if conditions.debugging:
        return "a debugging run (--pdb, --trace or -s)"
    if conditions.traced:
        return "a tracer or profiler (coverage, a debugger) is active"
    if not conditions.can_fork:
        return "no fork on this platform"
    if conditions.cores < 2:
        return "one usable core"
    if conditions.threads > 1:
        return "other threads run in this process"
    if conditions.connections:
        return f"{' and '.join(conditions.connections)} opened in this process"
    return None


def conditions_of(config: pytest.Config, context: RunContext, task_items: int) -> Conditions:
    """The run's conditions, read from pytest's config and the run's options."""
    option = config.option
    return Conditions(
        mode=context.options.lookahead,
        task_items=task_items,
        export=context.options.export is not None,
        xdist_worker=hasattr(config, "workerinput"),
        debugging=bool(
            getattr(option, "usepdb", False)
            or getattr(option, "trace", False)
            or getattr(option, "capture", "fd") == "no"
        ),
        traced=_traced(),
        can_fork=sys.platform.startswith("linux") and hasattr(os, "memfd_create"),
        cores=_usable_cores(),
        threads=_threads(),
        connections=tuple(sorted(connections)),
    )


def _traced() -> bool:
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: coverage's other tracer
    if monitoring is None:
        return False
    return any(monitoring.get_tool(tool) is not None for tool in range(6))


def _threads() -> int:
    """Threads in this process: Python's, and those a C library started (which Python 3.12's
    fork warning counts too), from /proc on Linux."""
    count = threading.active_count()
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"Threads:"):
                count = max(count, int(line.split()[1]))
    return count


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Checkable(Protocol):
    """A task item as the look-ahead process checks it (`items.Checkable`)."""

    @property
    def snapshot_path(self) -> Path:
        """The item's snapshot file."""
        ...

    def check_ahead(self, context: RunContext) -> Checked | None:
        """The item's check when it passes with nothing to write; else None."""
        ...


@dataclass(frozen=True)
class Checked:
    """An item the look-ahead process found passing: its result and the check's warnings."""

    result: ItemResult
    warnings: tuple[str, ...]


class Lookahead:
    """The run's side: the forked child, the results it sent, where the run has got to."""

    def __init__(self, pid: int, reader: int, position: mmap.mmap, order: dict[int, int]):
        self.pid = pid
        self._reader = reader
        self._position = position
        self._order = order
        self._found: dict[int, dict[str, Any]] = {}
        self._pending = b""
        self._ended = False
        self.taken = 0
        """Items that took the child's result."""

    @classmethod
    def start(cls, items: Sequence[Checkable], context: RunContext) -> Lookahead | None:
        """Fork the child over `items` (in run order); None when the fork fails."""
        position = mmap.mmap(-1, 8)  # shared with the child: the item the run is at
        struct.pack_into("q", position, 0, -1)
        reader, writer = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return None
        if pid == 0:  # the child: never returns
            os.close(reader)
            _child(items, context, writer, position)
        os.close(writer)
        os.set_blocking(reader, False)
        return cls(pid, reader, position, {id(item): at for at, item in enumerate(items)})

    def take(self, item: Checkable) -> Checked | None:
        """The child's result for `item`, when it sent one; else None, and the child stops
        before reaching it."""
        at = self._order.get(id(item))
        if at is None:
            return None
        struct.pack_into("q", self._position, 0, at)
        try:  # a message that cannot be read is no result: the item checks itself
            self._read()
            message = self._found.pop(at, None)
            if message is None or "result" not in message:
                return None
            checked = Checked(ItemResult.from_dict(message["result"]), tuple(message["warnings"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        self.taken += 1
        return checked

    def _read(self) -> None:
        """Everything the child has sent so far, without waiting (nothing once it has ended)."""
        chunks = [self._pending]
        while not self._ended:
            try:
                chunk = os.read(self._reader, 1 << 16)
            except BlockingIOError:
                break
            self._ended = not chunk
            chunks.append(chunk)
        data = b"".join(chunks)
        *lines, self._pending = data.split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                message = json.loads(line)
                self._found[message["at"]] = message

    def line(self) -> str:
        """What the look-ahead process did, for the verbose summary."""
        return (
            f"look-ahead: {self.taken} of {len(self._order)} task items were checked by a "
            f"forked process (--evaltasks-lookahead=off: the run alone)"
        )

    def close(self) -> None:
        """End the child (it may still be checking) and reap it; a second call does nothing."""
        if self._position.closed:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        os.close(self._reader)
        self._position.close()


def _child(
    items: Sequence[Checkable], context: RunContext, writer: int, position: mmap.mmap
) -> NoReturn:
    """Check the items from the last one back, until the run reaches them; then exit without
    running any of the parent's exit handlers."""
    status = 1
    try:
        watch = _Watch()
        with os.fdopen(writer, "wb") as out:
            for at in range(len(items) - 1, -1, -1):
                if struct.unpack_from("q", position, 0)[0] >= at:
                    break
                message: dict[str, Any] = {"at": at}
                item = items[at]
                checked = None if left_to_run(item.snapshot_path) else watch.check(item, context)
                if checked is not None:
                    message["result"] = checked.result.to_dict()
                    message["warnings"] = list(checked.warnings)
                out.write(json.dumps(message, ensure_ascii=False).encode() + b"\n")
                out.flush()
        status = 0
    finally:
        os._exit(status)


def left_to_run(snapshot: Path) -> bool:
    """An item the fork does not check: no snapshot yet (the run reports it), or a large one."""
    try:
        return snapshot.stat().st_size > LARGE_SNAPSHOT_BYTES
    except OSError:
        return True


class _Watch:
    """The child's view of what an item's check did besides deciding: output on either file
    descriptor or Python stream, log records, warnings. Any of it leaves the item to the run,
    where pytest captures and reports it."""

    def __init__(self) -> None:
        self.sink = os.memfd_create("evaltasks-lookahead-output")  # memory, never a file
        quiet = os.open(os.devnull, os.O_RDONLY)
        os.dup2(quiet, 0)
        os.close(quiet)
        os.dup2(self.sink, 1)
        os.dup2(self.sink, 2)
        self.stream = io.StringIO()
        sys.stdin = io.StringIO()
        sys.stdout = sys.stderr = self.stream
        self.records = _Counter()
        root = logging.getLogger()
        root.setLevel(logging.NOTSET)  # every record counts, whatever pytest's log level
        root.addHandler(self.records)

    def check(self, item: Checkable, context: RunContext) -> Checked | None:
        """The item's check when it passed cleanly and did nothing else; else None."""
        before = (os.fstat(self.sink).st_size, self.stream.tell(), self.records.count)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                checked = item.check_ahead(context)
            except Exception:
                return None
        after = (os.fstat(self.sink).st_size, self.stream.tell(), self.records.count)
        if caught or after != before:
            return None
        return checked


class _Counter(logging.Handler):
    """Counts the log records that reach the root logger."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
