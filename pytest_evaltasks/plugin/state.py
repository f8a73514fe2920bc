"""What the plugin keeps for one pytest session, in `config.stash`.

Free of heavy imports: the hooks read it on every pytest start, with or without `--evaltasks`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.registry import Registry
    from .builds import FreshBuilds
    from .changes import Changes
    from .git import FilesAt
    from .options import Options
    from .plan import RunPlan
    from .summary import ItemResult


@dataclass(frozen=True)
class RunContext:
    """Session-wide state the items share (kept in `config.stash`)."""

    options: Options
    registry: Registry
    plan: RunPlan
    template: ChatTemplate | None
    root: Path
    within: Path
    """The folder project files live in: the git checkout holding the root, else the root."""
    fresh: FreshBuilds
    changes: Changes | None = None
    base: FilesAt | None = None
    """The snapshot folder at `--evaltasks-base`, when given."""


CONTEXT_KEY: pytest.StashKey[RunContext] = pytest.StashKey()
RESULTS_KEY: pytest.StashKey[list[tuple[ItemResult, str]]] = pytest.StashKey()
"""Each finished item's result and pytest outcome, as the reports arrive."""
