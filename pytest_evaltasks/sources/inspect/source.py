"""Inspect AI tasks as a task source: inspect_evals' own (`inspect_evals/<task>`, its installed
folder named `inspect_evals:tasks`) and a user's own `@task` files.

Names are read without importing anything (inspect_evals' `_registry.py`, a user file's
`@task` functions); a task is built, by Inspect's own code (`sources/inspect/adapter`), only when a
run renders it. A request's `@k=v` parameters are the task's arguments (`inspect eval ... -T k=v`).
Each sample renders to one unit: the `Sample` as the dataset builds it, and the messages its
solver chain sends (`sources/inspect/adapter.build`). The `[task]` header records the task's solver,
scorer, metrics, epochs and generate config by identity; `[settings]` the installed versions
of inspect_ai and inspect_evals, so an upgrade that changes inspect_evals' own prompts is
named as such by the gate (`Upstream`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.lint_input import LintDoc, LintTask
from ...engine.ports import PortDoc
from ...engine.rendered import RenderedUnit, UnitsRendered, Upstream
from ...engine.sources import Entry, Registrar, SourceKind, SourceSetup
from .installed import OWN_PREFIX

if TYPE_CHECKING:
    from ...engine.chat_template import ChatTemplate
    from ...engine.data_slices import PreparedSlice, SlicePlan
    from ...engine.run_settings import RunSettings
    from ...engine.task_modules import LoadedModule
    from ...engine.task_string import TaskRequest
    from .adapter import InspectBuilt, InspectRef, RenderedSample
    from .data import Fetched

KIND = "inspect"
UPSTREAM_SETTING = "inspect"


def claims(directory: Path) -> bool:
    """inspect_evals' installed folder, or a folder of `@task` files."""
    from .adapter import holds_task_files

    return holds_task_files(directory)


class InspectTasks:
    """The Inspect tasks of a registry's folders."""

    kind = KIND

    def __init__(self, folders: list[Path], setup: SourceSetup) -> None:
        self.folders = folders
        self.data_dir = setup.data_dir
        self.root = setup.root
        if setup.root is not None:  # the project's folder is found now (git is asked), not as
            # a task renders: whatever a render reads is recorded as the task's input
            from ...engine.paths import relative_path_text

            relative_path_text(str(setup.root), setup.root)
        self.refs: dict[str, InspectRef] = {}
        self.modules: dict[Path, LoadedModule] = {}

    @property
    def partial(self) -> bool:
        return False

    def register(self, registrar: Registrar) -> None:
        from .adapter import InspectRef, installed_tasks, task_functions
        from .installed import installed_package

        installed = installed_package()
        for folder in self.folders:
            if installed is not None and folder.resolve() == installed.resolve():
                refs = installed_tasks(installed)
            else:
                refs = [
                    InspectRef(name, function, None, path, line)
                    for path in sorted(folder.glob("*.py"))
                    if not path.name.startswith("_")
                    for name, function, line in task_functions(path)
                ]
            for ref in refs:
                self.refs[ref.name] = ref
                registrar.add(Entry(ref.name, ref.path, ref, source=self))

    def ensure(self, registrar: Registrar, names: Iterable[str]) -> None:
        return None  # every name is registered up front (read without importing)

    def members(self, registrar: Registrar, request: TaskRequest) -> list[TaskRequest] | None:
        return None  # Inspect has no groups

    def prepare_all(self, registrar: Registrar) -> None:
        return None

    def partial_note(self) -> str | None:
        return None

    def default_shots(self, entry: Entry) -> int:
        return 0  # few-shot counts are a task's own arguments (`@fewshot=5`)

    def _ref(self, entry: Entry) -> InspectRef:
        ref: InspectRef = entry.raw
        return ref

    def version(self, entry: Entry) -> object:
        """inspect_evals' `eval.yaml` version of the task's folder; a user's task tells its
        version only when built."""
        ref = self._ref(entry)
        if ref.owned:
            from .adapter import eval_version

            return eval_version(ref.path.parent)
        return "(set by its @task function)"

    def location(self, entry: Entry) -> tuple[Path, int]:
        from .adapter import definition

        return definition(self._ref(entry))

    def dependencies(self, entry: Entry) -> dict[str, str]:
        """A user's task file; inspect_evals' own are installed (an upgrade is named by the
        versions in `[settings]`). The data files a build read are its recorded inputs."""
        ref = self._ref(entry)
        return {} if ref.owned else {str(ref.path): ""}

    def lint_ignores(self, entry: Entry) -> tuple[list[str], str]:
        return [], ""

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        return False  # where a task reads from is known only once it is built

    def slice_plan(self, entry: Entry, request: TaskRequest, data_dir: Path) -> InspectSlice:
        """The data root: the folders a task's data goes in are known only once it is built
        (`InspectSlice.prepare`)."""
        return InspectSlice(self, data_dir, [(entry, request)])

    def fetch(self, entry: Entry, request: TaskRequest, data_dir: Path) -> Fetched:
        """What a task fetches as it is built (its datasets' splits, its URL files), for
        `--evaltasks-save-data`; local copies are not read."""
        from .adapter import build
        from .data import Fetched

        ref = self._ref(entry)
        fetched = Fetched(data_dir, entry.name)
        with _importable(None if ref.owned else ref.path.parent):
            build(ref, self._module(ref), request.params_dict, data_dir, 0, fetched)
        return fetched

    def suggestions(self) -> list[str]:
        return list(self.refs)

    def _module(self, ref: InspectRef) -> Any:
        """A user's task file, imported afresh for each build, its folder's modules too (as a
        new Inspect process imports them: a module-level generator starts at its seed), and
        observed as a task module is; inspect_evals' own task's folder forgotten, so the build
        imports it afresh (None)."""
        from ...engine.task_modules import forget_modules, load_module, module_name_for
        from .adapter import InspectError
        from .data import private_evals_cache

        forget_modules([str(ref.path.parent)])
        if ref.owned:
            return None
        with private_evals_cache():
            loaded = load_module(ref.path, module_name_for(ref.path))
        self.modules[ref.path] = loaded
        if loaded.module is None:
            raise InspectError(f"task file {ref.path} failed to import:\n{loaded.error}")
        return loaded.module

    def render(
        self,
        entry: Entry,
        request: TaskRequest,
        run: RunSettings,
        template: ChatTemplate | None,
        data_dir: Path | None,
    ) -> UnitsRendered:
        from ...engine.rows import dataset_caches
        from .adapter import build

        ref = self._ref(entry)
        with _importable(None if ref.owned else ref.path.parent):
            module = self._module(ref)
            built = build(ref, module, request.params_dict, data_dir, run.max_samples)
        rendered = _rendered(request, ref, built, self.root)
        rendered.inputs = {*built.read, *self.dependencies(entry)}
        rendered.caches = dataset_caches()
        return rendered


@dataclass
class InspectSlice:
    """Inspect tasks' data to save (a `data_slices.SlicePlan`): every Inspect task of a run
    shares one plan, named by the data root, as each task's folders are known only once it is
    built."""

    source: InspectTasks
    directory: Path
    tasks: list[tuple[Entry, TaskRequest]]

    def merge(self, other: SlicePlan) -> None:
        assert isinstance(other, InspectSlice)
        self.tasks += [task for task in other.tasks if task not in self.tasks]

    def prepare(self, count: int, root: Path | None = None) -> list[PreparedSlice]:
        """Each task built with what it fetches kept, then the first `count` rows of each split
        and each URL file, one slice per folder (the first task's, where two read one)."""
        slices: dict[Path, PreparedSlice] = {}
        for entry, request in self.tasks:
            for prepared in self.source.fetch(entry, request, self.directory).prepared(count):
                key = prepared.directory / (prepared.url or "")
                slices.setdefault(key, prepared)
        return list(slices.values())


@contextlib.contextmanager
def _importable(folder: Path | None) -> Iterator[None]:
    """A user's task folder on `sys.path` while its task is imported and built, as Inspect
    loads a task file (its helpers import by their plain names)."""
    if folder is None:
        yield
        return
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _rendered(
    request: TaskRequest, ref: InspectRef, built: InspectBuilt, root: Path | None
) -> UnitsRendered:
    """A built task as rendered units, with the `[task]` fields and settings they record; the
    paths its build shows written as every clone records them (`stable_paths`)."""
    from .adapter import plain, versions
    from .data import stable_paths

    task = built.task
    header: dict[str, Any] = {"task": task.name}
    if request.metric_params:
        header["task_args"] = dict(request.metric_params)
    header["config_source"] = _source_text(ref)
    dataset = task.dataset
    where = [stable_paths(part, root) for part in (dataset.name, built.location) if part]
    header["dataset"] = " @ ".join(dict.fromkeys(where)) or "-"
    for key in ("solver", "scorer", "metrics", "epochs"):
        value = getattr(task, key, None)
        if value is not None:
            header[key] = value
    config = task.config.model_dump(mode="json", exclude_none=True)
    if config:
        header["config"] = config
    for key in ("setup", "cleanup", "sandbox", "message_limit", "token_limit", "time_limit"):
        value = getattr(task, key, None)
        if value is not None:
            header[key] = stable_paths(plain(value), root) if key == "sandbox" else value
    header["samples"] = built.total
    installed = versions()
    setting = "; ".join(f"{package} {version}" for package, version in installed.items())
    stops = [stop for stop in task.config.stop_seqs or [] if isinstance(stop, str) and stop]
    limits = (stops, task.config.max_tokens)
    samples = [
        replace(each, sample=stable_paths(each.sample, root), sent=stable_paths(each.sent, root))
        for each in built.samples
    ]
    units = [_unit(sample, position, limits) for position, sample in enumerate(samples)]
    return UnitsRendered(
        name=request.label,
        version=task.version,
        header=header,
        settings={UPSTREAM_SETTING: setting},
        units=units,
        total=built.total,
        lint=LintTask(pool_is_eval=False, pool_short=None),
        kind=KIND,
        upstream=Upstream(name="Inspect", setting=UPSTREAM_SETTING, owned=ref.owned, config="task"),
        ids="ids are the samples' own ids (their position from 1 when they have none)",
    )


def _source_text(ref: InspectRef) -> str:
    """Where the task is defined: inspect_evals' own as `inspect_evals:<folder>`, a user's
    file by its path (made relative to the root when written)."""
    if ref.owned:
        return OWN_PREFIX + ref.path.parent.name
    return str(ref.path.resolve())


def _unit(
    rendered: RenderedSample, position: int, limits: tuple[list[str], int | None]
) -> RenderedUnit:
    """One sample as a unit: its fields and what its solvers sent, shown and exported."""
    sample = rendered.sample
    fields = {"sample": sample, "sent": rendered.sent}
    shown: list[tuple[str, Any]] = [("target", sample.get("target", ""))]
    if "choices" in sample:
        shown.append(("choices", sample["choices"]))
    if "metadata" in sample:
        shown.append(("metadata", sample["metadata"]))
    if len(rendered.sent) > 1:
        shown.append(("generate_calls", len(rendered.sent)))
    first = rendered.sent[0] if rendered.sent else []
    texts = [
        (f"message {number} of {len(first)} ({message['role']})", _text(message["content"]))
        for number, message in enumerate(first, start=1)
    ]
    export = {
        "sample_id": sample.get("id", rendered.label),
        "position": position,
        "sample": sample,
        "messages": first,
        "generate_calls": rendered.sent,
        "prompt": "\n\n".join(text for _, text in texts),
    }
    lint = _lint(rendered, *limits)
    port = _port_doc(rendered, position, limits)
    return RenderedUnit(rendered.label, position, fields, shown, texts, export, lint, port)


def _port_doc(
    rendered: RenderedSample, position: int, limits: tuple[list[str], int | None]
) -> PortDoc:
    """A sample as a port compares it: its row by its position in the dataset (Inspect keeps
    no split), the text of the messages the model is sent (a system message aside), its
    choices and target as the dataset gives them; its few-shot examples have no rows (a
    solver writes them into the prompt). A key is read from its id and metadata."""
    sample = rendered.sample
    first = rendered.sent[0] if rendered.sent else []
    prompt = "\n\n".join(_text(m["content"]) for m in first if m.get("role") != "system")
    target = sample.get("target", "")
    metadata = sample.get("metadata")
    columns = {**(metadata if isinstance(metadata, dict) else {}), "id": sample.get("id")}
    return PortDoc(
        row=str(position),
        prompt=prompt,
        choices=tuple(str(choice) for choice in sample.get("choices", [])),
        target=target if isinstance(target, str) else ", ".join(map(str, target)),
        stops=tuple(limits[0]),
        max_tokens=limits[1],
        columns=columns,
        generates=True,
    )


def _text(content: Any) -> str:
    """A message's text: its string, or its text parts joined (other parts named)."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        parts.append(part.get("text", "") if kind == "text" else f"<{kind} part>")
    return "\n".join(parts)


def _lint(rendered: RenderedSample, stops: list[str], max_tokens: int | None) -> LintDoc:
    """A sample as the lint rules read it: what is generated from (the last message sent),
    its choices and target, and the task's stop sequences and token limit."""
    first = rendered.sent[0] if rendered.sent else []
    last = _text(first[-1]["content"]) if first else ""
    sample = rendered.sample
    choices = [str(choice) for choice in sample.get("choices", [])]
    target = sample.get("target", "")
    golds = [target] if isinstance(target, str) else [str(t) for t in target]
    return LintDoc(
        label=rendered.label,
        prompt_end=last[-1:],
        joins=[],
        blank_query=not any(_text(message["content"]).strip() for message in first),
        scored=choices,
        choice_keys=tuple(choices),
        counted=len(choices) if len(choices) > 1 else 0,
        asked=repr(first),
        golds=golds,
        stops=stops,
        max_tokens=max_tokens,
    )


SOURCE_KIND = SourceKind(KIND, claims, InspectTasks)
"""Inspect task folders as a kind of task source (`sources.SOURCE_KINDS`)."""
