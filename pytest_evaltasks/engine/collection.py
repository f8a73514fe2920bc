"""Keep Python's cyclic garbage collector from rescanning the docs of a large build.

Building a task creates objects that live long (rows, docs, hashes): each full collection then
rescans all of them, about a third of the time of a 200k-doc build. Pausing the collector would
avoid that, but would also keep a prompt function's cyclic garbage alive for the whole build.
Instead the collector stays on, and at checkpoints the survivors are collected young and then
frozen (`gc.freeze`): full collections skip them, while new garbage is still collected as it
is made. Leaving the outermost stretch unfreezes everything. A caller that froze objects itself
(or turned the collector off) is left alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

CHECKPOINT_ROWS = 20_000
"""Rows between checkpoints while a split is turned into docs."""

_depth = 0
_active = False


@contextmanager
def long_lived() -> Iterator[None]:
    """A stretch in which `checkpoint()` freezes the survivors; nested stretches are one."""
    global _depth, _active
    if _depth == 0:
        _active = gc.isenabled() and gc.get_freeze_count() == 0
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _active:
            _active = False
            gc.unfreeze()


def checkpoint(objects: int = CHECKPOINT_ROWS) -> None:
    """Collect the young generations, then freeze what survived (inside `long_lived` only).

    `objects` says how many long-lived objects the caller has just made: below
    `CHECKPOINT_ROWS` the full collections they cause are cheap, and so is skipping them.
    """
    if _active and objects >= CHECKPOINT_ROWS:
        gc.collect(1)
        gc.freeze()
