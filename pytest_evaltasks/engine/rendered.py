"""What a task source renders, in a form every source fills the same way: rendered units.

lighteval-style modules are rendered through our own `Task` (docs, few-shot examples, prompts);
a source that drives another harness's own objects (lm-eval's YAML tasks, `lm_eval_source`)
hands back what that harness would send instead: one `RenderedUnit` per evaluated doc, with the
canonical fields a snapshot hashes (the requests, the target, the few-shot ids) and the texts it
shows in full. `snapshot.units` fingerprints and lays them out; the gate judges them like any
other snapshot. Plain data, no imports beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RenderedUnit:
    """One evaluated doc as a source renders it.

    `fields` is everything the model is sent or scored against, as plain data (str, int, float,
    bool, None, lists, str-keyed dicts): the unit's hash is over its canonical encoding, so any
    change in it is a content change. `shown` are the lines shown above the prompt (`key`,
    value) and `texts` the texts shown in full behind `| ` (title, text), the first context
    first. `export` is the unit's record for `--evaltasks-export` (JSON data).
    """

    label: str
    position: int
    fields: dict[str, Any]
    shown: list[tuple[str, Any]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)
    export: dict[str, Any] = field(default_factory=dict)


@dataclass
class RenderedTask:
    """A whole task as a source renders it: its `[task]` fields, its settings and its units.

    `header` values are plain data or callables/objects (recorded by their canonical identity);
    the snapshot layer writes them. `total` is the number of docs the task has (a run limited
    by `--evaltasks-max-samples` renders fewer). `inputs` are files the source knows the task
    reads (absolute paths: its configs, its hooks' modules, its data); the build also observes
    what the code opens. `lint` carries what the lint rules need beyond the units.
    """

    name: str
    version: Any
    header: dict[str, Any]
    settings: dict[str, str]
    units: list[RenderedUnit]
    total: int
    inputs: set[str] = field(default_factory=set)
    lint: dict[str, Any] = field(default_factory=dict)
    kind: str = "units"
    caches: list[str] = field(default_factory=list)
    """Folders whose files the build may open that are never its inputs (the `datasets`
    cache, which lives in the project when HOME does)."""
