"""The run's shared state: what `pytest_configure` works out once and every item reads.

Made only in a session that asks for evaluation tasks; `state` holds the stash keys it is kept
under, which every session reads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.registry import Registry
    from .builds import FreshBuilds
    from .changes import Changes
    from .git import FilesAt
    from .options import Options
    from .plan import RunPlan
    from .renderings import Rendering


@dataclass(frozen=True)
class RunContext:
    """Session-wide state the items share (kept in `config.stash`)."""

    options: Options
    registry: Registry
    plan: RunPlan
    renderings: list[Rendering]
    """The run's renderings, in order: every task is checked under each."""
    root: Path
    within: Path
    """The folder project files live in: the git checkout holding the root, else the root."""
    fresh: FreshBuilds
    changes: Changes | None = None
    base: FilesAt | None = None
    """The snapshot folder at `--evaltasks-base`, when given."""
    left_out: list[str] = field(default_factory=list)
    """`--evaltasks-local-only`: the labels of the tasks left out (their data is not local)."""
    _extra_renderings: dict[str, Rendering] = field(default_factory=dict)

    @functools.cached_property
    def snapshot_folder_shown(self) -> str:
        """The snapshot folder as messages name it: relative to the root when inside it."""
        folder = self.options.snapshot_dir
        try:
            return folder.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return folder.as_posix()

    def rendering(self, key: str) -> Rendering:
        """A rendering by key: one of the run's, or one a recorded snapshot names (checked
        under `all` though the run does not list it), loaded on first use; one that cannot be
        loaded raises `RenderingError`, which fails the item that needs it."""
        for rendering in self.renderings:
            if rendering.key == key:
                return rendering
        if key not in self._extra_renderings:
            from .renderings import resolve

            base = self.options.run
            loaded = resolve([key], base, self.root, self.root, self.options.tokens)
            self._extra_renderings[key] = loaded[0]
        return self._extra_renderings[key]
