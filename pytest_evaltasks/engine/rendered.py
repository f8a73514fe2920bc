"""What a task source renders for one resolved request, in one typed form whatever the source.

Every source's `render` returns a `RenderedTask`: the task's name and version, its evaluated docs
in evaluation order (`units`), how many it has in all, the files it knows it reads, and the
harness that owns it when it is another harness's own (`Upstream`). The units come in one of
two kinds, and the snapshot layer records each kind in its own way (its `[task]` header and its
doc hashes, byte for byte as they have always been recorded):

- `DocsRendered`: lighteval-style tasks, rendered by our own `Task` into `Doc`s with their
  few-shot examples (the `Task` and its `TaskResult` are kept: the header reads them);
- `UnitsRendered`: a task another harness renders with its own objects (lm-eval's YAML tasks),
  one `RenderedUnit` per evaluated doc with the canonical fields a snapshot hashes.

Either kind also describes each doc to the lint rules in one neutral form (`LintDoc`), so the
rules exist once. Plain data, no imports beyond the standard library at run time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .lint_input import LintDoc, LintTask

if TYPE_CHECKING:
    from .doc import Doc
    from .ports import PortDoc
    from .task import Task, TaskResult
    from .task_string import TaskRequest


@dataclass(frozen=True)
class Upstream:
    """The harness whose own release defines a task's config (lm-eval's installed YAML), so an
    upgrade of it, not its user, may change the task's prompts."""

    name: str
    """The harness as messages name it (`lm-eval`)."""
    setting: str
    """The `[settings]` key its version is recorded under (`lm_eval`)."""
    owned: bool
    """The task's config is one of the harness's own files, which its user does not edit."""
    config: str = "config"
    """What its task configs are, as messages name them (`YAML`)."""


@dataclass(kw_only=True)
class RenderedTask(ABC):
    """One resolved request as its source renders it (see the module docstring)."""

    name: str
    """The task string it was rendered for (`mmlu:anatomy|5`)."""
    version: Any
    total: int
    """The task's evaluation docs, all of them whatever a run rendered
    (`--evaltasks-max-samples` renders fewer)."""
    inputs: set[str] = field(default_factory=set)
    """Files (absolute paths) the source knows the task reads: its configs, its hooks, its
    data. The build also observes what the code opens."""
    caches: list[str] = field(default_factory=list)
    """Folders whose files the build may open that are never its inputs (the `datasets`
    cache, which lives in the project when HOME does)."""
    upstream: Upstream | None = None
    """The harness that owns the task's config, when it is another harness's own."""
    ids: str = "ids run from 0"
    """What its doc ids are, for a message that names one it does not have."""
    shots: int | None = None
    """The few-shot count its harness rendered with, when it keeps one of the task's own
    instead of the request's (an lm-eval YAML that fixes `num_fewshot: 0`); None: the
    request's."""

    @property
    @abstractmethod
    def size(self) -> int:
        """Docs rendered."""

    @abstractmethod
    def labels(self) -> list[str]:
        """Each rendered doc's label (its id), in evaluation order."""

    @abstractmethod
    def lint_docs(self) -> Iterable[LintDoc]:
        """Each rendered doc as the lint rules read it, in evaluation order."""

    @abstractmethod
    def lint_task(self) -> LintTask:
        """The task as a whole, as the lint rules read it."""


@dataclass(kw_only=True)
class DocsRendered(RenderedTask):
    """A lighteval-style task rendered by our own `Task`."""

    task: Task
    result: TaskResult

    @classmethod
    def of(cls, task: Task, result: TaskResult, ids: str = "ids run from 0") -> DocsRendered:
        """A task's finished build as rendered docs."""
        return cls(
            name=result.request.label,
            version=task.version,
            total=result.num_eval_docs,
            task=task,
            result=result,
            ids=ids,
        )

    @property
    def docs(self) -> list[tuple[str, Doc]]:
        """The labelled docs, in evaluation order."""
        return self.result.docs

    @property
    def request(self) -> TaskRequest:
        return self.result.request

    @property
    def size(self) -> int:
        return len(self.docs)

    def labels(self) -> list[str]:
        return [label for label, _ in self.docs]

    def lint_docs(self) -> Iterable[LintDoc]:
        from .doc_lint import lint_docs

        return lint_docs(self.docs)

    def lint_task(self) -> LintTask:
        from .doc_lint import lint_task

        return lint_task(self.result)


@dataclass(frozen=True)
class RenderedUnit:
    """One evaluated doc as a harness renders it.

    `fields` is everything the model is sent or scored against, as plain data (str, int, float,
    bool, None, lists, str-keyed dicts): the unit's hash is over its canonical encoding, so any
    change in it is a content change. `shown` are the lines shown above the prompt (`key`,
    value) and `texts` the texts shown in full behind `| ` (title, text), the first context
    first. `export` is the unit's record for `--evaltasks-export` (JSON data); `lint` what the
    lint rules read of it; `port` what a port check compares it by (`ports.PortDoc`).
    """

    label: str
    position: int
    fields: dict[str, Any]
    shown: list[tuple[str, Any]] = field(default_factory=list)
    texts: list[tuple[str, str]] = field(default_factory=list)
    export: dict[str, Any] = field(default_factory=dict)
    lint: LintDoc | None = None
    port: PortDoc | None = None


@dataclass(kw_only=True)
class UnitsRendered(RenderedTask):
    """A task another harness renders: its `[task]` fields and settings, and its units.

    `header` values are plain data or callables/objects (recorded by their canonical identity);
    the snapshot layer writes them. `settings` are the harness's own (its version, its chat
    rules), recorded after the run's. `kind` names the harness in the export.
    """

    header: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    units: list[RenderedUnit] = field(default_factory=list)
    lint: LintTask = field(default_factory=lambda: LintTask(False, None))
    kind: str = "units"

    @property
    def size(self) -> int:
        return len(self.units)

    def labels(self) -> list[str]:
        return [unit.label for unit in self.units]

    def lint_docs(self) -> Iterable[LintDoc]:
        return (unit.lint for unit in self.units if unit.lint is not None)

    def lint_task(self) -> LintTask:
        return self.lint
