"""The global random generators, as lighteval's pipeline leaves them when it builds a task.

lighteval calls `random.seed(1234)` and `numpy.random.seed(1234)` before it builds any task, so
a prompt function that draws from the global `random` (GPQA shuffles its choices that way) is
deterministic there. We seed both the same way around each task's build, so a task renders what
a one-task lighteval run renders whatever else our run holds, and then give the caller back the
generator states it had: the harness never leaves the global generators changed.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

REFERENCE_SEED = 1234


@contextmanager
def reference_seeds() -> Iterator[None]:
    """Seed `random` and, when it is imported, `numpy.random` to 1234; restore both after.

    numpy is not imported here (it costs a tenth of a second and is often absent): a prompt
    function that uses it has imported it by the time its task is built. `numpy_seeded` tells a
    caller whether numpy was seeded, so a build that imported numpy itself can be redone.
    """
    python_state = random.getstate()
    numpy_random = _numpy_random()
    numpy_state = numpy_random.get_state() if numpy_random is not None else None
    random.seed(REFERENCE_SEED)
    if numpy_random is not None:
        numpy_random.seed(REFERENCE_SEED)
    try:
        yield
    finally:
        random.setstate(python_state)
        if numpy_random is not None:
            numpy_random.set_state(numpy_state)


def numpy_seeded() -> bool:
    """True when `reference_seeds` would seed numpy (it is imported)."""
    return _numpy_random() is not None


def _numpy_random() -> Any:
    """`numpy.random` if numpy is already imported, else None."""
    numpy = sys.modules.get("numpy")
    return getattr(numpy, "random", None) if numpy is not None else None
