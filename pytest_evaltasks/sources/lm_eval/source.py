"""lm-eval's YAML tasks as a task source: its installed task folder and custom YAML folders.

A folder of lm-eval YAML task configs (`task:`, `group:`, `tag:`, `class:`) is an lm-eval
folder; `--evaltasks-dir=lm_eval:tasks` names lm-eval's installed one. As `TaskManager` does
with `--include_path`, lm-eval's own folder always comes first (a custom folder may override its
tasks and its groups may name them), but `all` and `--evaltasks-list` cover the folders named.

**Indexing only what a run needs.** lm-eval's `TaskIndex` parses every YAML file under its
folders before it loads one task; this source asks a `sources/lm_eval/index.YamlIndex` instead,
which indexes only the files that can define the names a run asks for, verified against the files'
bytes and kept in pytest's cache (its module docstring says how). The source registers only
the names the index trusts, and plans and renders them.

**Groups.** A group or a tag stands for its tasks, in lm-eval's order (`sources/lm_eval/adapter`
plans it with lm-eval's own factory). A task whose config the group changes (`num_fewshot`,
`fewshot_split`, a metric list...) is not the task of that name: it is checked as
`GROUP::TASK`, and tasks a group defines inline keep lm-eval's `GROUP::NAME`.

**Rendering.** `sources/lm_eval/build.build`: lm-eval's `simple_evaluate` with the rows from the
data root, collected into one `RenderedUnit` per doc: the request type, every context, every
continuation, the generation arguments, the target, the few-shot doc ids and the doc's place.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...engine.lint_input import LintDoc, LintTask
from ...engine.ports import PortDoc
from ...engine.rendered import RenderedUnit, UnitsRendered, Upstream
from ...engine.rows import cache_advice, dataset_caches
from ...engine.sources import Entry, SourceKind, holds_task_modules
from ...errors import DatasetError, EvalTaskError, RegistryError
from .index import CACHE_KEY, RECORDS_VERSION, FileRecord, YamlIndex, environment_key

if TYPE_CHECKING:
    from ...engine.chat_template import ChatTemplate
    from ...engine.data_slices import PreparedSlice, SlicePlan
    from ...engine.run_settings import RunSettings
    from ...engine.sources import Registrar, SourceSetup
    from ...engine.task_string import TaskRequest

KIND = "lm-eval"
UPSTREAM_SETTING = "lm_eval"
"""The `[settings]` key lm-eval's version is recorded under."""
OWN_PREFIX = "lm_eval:"
"""How a `config_source` inside lm-eval's installed task folder begins (`lm_eval:tasks/...`):
a file of lm-eval's own, which its user does not edit."""
LINT_IGNORE_KEY = "evaltasks_lint_ignore"
"""`metadata: {evaltasks_lint_ignore: [rule, ...]}` in a YAML task silences rules for it."""
_SKIPPED_DIRS = frozenset({"__pycache__", "__snapshots__", ".ipynb_checkpoints", ".git"})
_TOP_KEY = re.compile(rb"^(task|group|class)\s*:", re.MULTILINE)


def is_lm_eval_folder(directory: Path) -> bool:
    """A folder of lm-eval YAML task configs: a `*.yaml` at any depth with a top-level `task`,
    `group` or `class` key, and no lighteval-style module (a top-level `*.py` that names
    `TASKS_TABLE`) beside them."""
    if holds_task_modules(directory):  # first: a folder of task modules never asks for lm-eval
        return False
    installed = _installed_folder()
    if installed is not None and _same(directory, installed):
        return True
    for folder, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".yaml"):
                try:
                    with open(os.path.join(folder, name), "rb") as stream:
                        head = stream.read(65536)
                except OSError:
                    continue
                if _TOP_KEY.search(head):
                    return True
    return False


def _installed_folder() -> Path | None:
    from .adapter import installed_tasks_folder

    return installed_tasks_folder()


def _same(left: Path, right: Path) -> bool:
    try:
        return left.resolve() == right.resolve()
    except OSError:
        return False


@dataclass
class LmEvalRef:
    """What the registry keeps of one lm-eval task: enough to list it and to build it."""

    task: str
    """lm-eval's name for it."""
    yaml_path: Path | None
    version: Any = None
    num_fewshot: Any = None
    via: str | None = None
    """The group it is built through (its config in that group differs), or None."""
    config: dict[str, Any] | None = None
    """Its config in the group, hooks unresolved (variants only)."""


class LmEvalYaml:
    """The lm-eval task folders of a registry (see the module docstring): what the registry
    asks of a task source, answered from one `YamlIndex` (which files define which names)."""

    kind = KIND

    def __init__(self, folders: list[Path], setup: SourceSetup) -> None:
        installed = _installed_folder()
        listed = [folder.resolve() for folder in folders]
        self.listed = listed
        roots: list[Path] = []
        if installed is not None:
            roots.append(installed.resolve())
        roots += [folder for folder in listed if folder not in roots]
        self.yaml_index = YamlIndex(roots, setup.cache)
        """The index of the folders' YAML files (lm-eval's own folder first, as `TaskManager`
        orders `--include_path`)."""
        self.data_dir = setup.data_dir
        wanted = setup.wanted
        self.wanted = None if wanted is None else list(dict.fromkeys(wanted))
        self._expanded: dict[str, list[Any]] = {}
        self._dependencies: dict[str, set[str]] = {}

    @property
    def index(self) -> dict[str, Any]:
        """lm-eval's index entries of the names indexed so far (the index's)."""
        return self.yaml_index.index

    @property
    def partial(self) -> bool:
        """Only the files that can define the names asked for were indexed."""
        return self.yaml_index.partial

    # registration ---------------------------------------------------------------------------

    def register(self, registrar: Registrar) -> None:
        from .adapter import LmEvalError, require

        try:
            require()
        except LmEvalError as exc:
            folders = ", ".join(str(folder) for folder in self.listed)
            raise RegistryError(
                f"task folder(s) {folders} hold lm-eval YAML tasks: {exc}"
            ) from None
        self.yaml_index.load_cache()
        full = self.listed if self.wanted is None else []
        wanted = set(self.wanted or [])
        self.yaml_index.index_names(wanted, exact=set(wanted), whole=full)
        self._publish(registrar)
        self.yaml_index.save_cache()

    def partial_note(self) -> str | None:
        """What a run over some tasks indexed, for the header."""
        if not self.partial:
            return None
        indexed, total = self.yaml_index.files_indexed, self.yaml_index.files_found
        return (
            f"indexed {indexed} of {total} lm-eval YAML files: those that can define "
            f"the tasks asked for (each file read and hashed, its index record in pytest's cache "
            f"verified against its bytes and its includes')"
        )

    def ensure(self, registrar: Registrar, names: Iterable[str]) -> None:
        trusted = self.yaml_index.trusted
        missing = [name for name in names if name not in trusted]
        groups = {name.split("::")[0] for name in missing if "::" in name}
        plain = [name for name in missing if "::" not in name]
        if plain or groups - trusted:
            self.yaml_index.index_names(set(plain) | groups, exact=set(plain) | groups)
            self._publish(registrar)
            self.yaml_index.save_cache()
        for group in sorted(groups):
            if group in self.index and self.yaml_index.kind(group) == "GROUP":
                self._plan(registrar, group)

    def _publish(self, registrar: Registrar) -> None:
        """Register every trusted task name (groups and tags are expanded on request)."""
        from ...engine.task_string import unwritable

        for warning in self.yaml_index.overrides:
            registrar.warn(warning)
        for name in sorted(self.yaml_index.trusted):
            entry = self.index.get(name)
            if entry is None or self.yaml_index.kind(name) not in ("TASK", "PY_TASK"):
                continue
            path = Path(entry.yaml_path) if entry.yaml_path else Path(".")
            other = registrar.owner(name)
            if other is not None and other.source is not self:
                registrar.mark_unusable(
                    name,
                    f"is defined by a {other.source.kind if other.source else 'task'} task file "
                    f"({other.origin}) and by an lm-eval YAML ({path}); rename one of them "
                    f"(task names must be unique across task folders)",
                    other.origin,
                    path,
                )
                continue
            if registrar.known(name):
                continue
            problem = unwritable(name)
            if problem is not None:
                registrar.mark_unusable(
                    name, f"cannot be requested: its name {problem} (an lm-eval task)", path
                )
                continue
            record = self.yaml_index.record_of(entry.yaml_path)
            part = record.config if record is not None and record.config else {}
            version = part.get("__version__", [None])[0]
            ref = LmEvalRef(name, path, version, part.get("num_fewshot"))
            listed = self.yaml_index.root_of(path) in self.listed
            registrar.put(Entry(name, path, ref, source=self, listed=listed))

    # groups ---------------------------------------------------------------------------------

    def members(self, registrar: Registrar, request: TaskRequest) -> list[TaskRequest] | None:
        name = request.name
        if name not in self.index or self.yaml_index.kind(name) not in ("GROUP", "TAG"):
            return None
        leaves = self._plan(registrar, name)
        return [request.for_task(item) for item in leaves if registrar.registered(item)]

    def _plan(self, registrar: Registrar, group: str) -> list[str]:
        """The item names a group or tag stands for, registering the variants it makes."""
        from .adapter import members

        if group in self._expanded:
            return list(self._expanded[group])
        try:
            leaves = members(self.index, group)
        except (KeyboardInterrupt, MemoryError):
            raise
        except BaseException as exc:
            raise RegistryError(
                f"lm-eval could not read group {group!r}: {type(exc).__name__}: {exc}"
            ) from None
        entry = self.index[group]
        origin = Path(entry.yaml_path) if entry.yaml_path else Path(".")
        names: list[str] = []
        self.ensure_names(registrar, [leaf.task for leaf in leaves if not leaf.variant])
        for leaf in leaves:
            if not leaf.variant:
                names.append(leaf.task)
                continue
            item = leaf.task if "::" in leaf.task else f"{group}::{leaf.task}"
            names.append(item)
            if not registrar.registered(item):
                metadata = (leaf.config or {}).get("metadata") if leaf.config else None
                version = metadata.get("version") if isinstance(metadata, dict) else None
                ref = LmEvalRef(
                    leaf.task, origin, version, leaf.num_fewshot, via=group, config=leaf.config
                )
                listed = self.yaml_index.root_of(origin) in self.listed
                registrar.put(Entry(item, origin, ref, source=self, listed=listed))
        self._expanded[group] = names
        return list(names)

    def ensure_names(self, registrar: Registrar, names: list[str]) -> None:
        missing = [name for name in names if not registrar.registered(name)]
        if missing:
            self.ensure(registrar, missing)

    def prepare_all(self, registrar: Registrar) -> None:
        """Register the variants of every group of the listed folders but lm-eval's own (whose
        855 groups are planned only when one is named)."""
        for name in sorted(self.index):
            entry = self.index[name]
            if self.yaml_index.kind(name) != "GROUP" or entry.yaml_path is None:
                continue
            root = self.yaml_index.root_of(Path(entry.yaml_path))
            installed = _installed_folder()
            if root in self.listed and (installed is None or not _same(root, installed)):
                try:
                    self._plan(registrar, name)
                except RegistryError:
                    continue

    # what the registry asks about one task ---------------------------------------------------

    def _ref(self, entry: Entry) -> LmEvalRef:
        ref = entry.raw
        assert isinstance(ref, LmEvalRef)
        return ref

    def default_shots(self, entry: Entry) -> int:
        shots = self._ref(entry).num_fewshot
        return shots if isinstance(shots, int) and not isinstance(shots, bool) else 0

    def config(self, entry: Entry) -> Any:
        """The task's config as lm-eval merges it, hooks left as file paths."""
        ref = self._ref(entry)
        if ref.config is not None:
            return ref.config
        from .adapter import unresolved_config

        return unresolved_config(self.index, ref.task)

    def version(self, entry: Entry) -> Any:
        return self._ref(entry).version

    def location(self, entry: Entry) -> tuple[Path, int]:
        ref = self._ref(entry)
        path = ref.yaml_path or entry.origin
        return path, _line_of(path, ref.task)

    def dependencies(self, entry: Entry) -> dict[str, str]:
        """Its YAML and every file it includes, its `!function` modules, its data folder."""
        return dict.fromkeys(sorted(self._dependency_files(entry)), "")

    def _dependency_files(self, entry: Entry) -> set[str]:
        if entry.name in self._dependencies:
            return self._dependencies[entry.name]
        from ..local_datasets import local_folder, local_subset
        from .build import dataset_of, hook_files

        ref = self._ref(entry)
        found: set[str] = set()
        for path in {ref.yaml_path, entry.origin}:
            if path is None:
                continue
            found.add(os.path.abspath(path))
            record = self.yaml_index.record_of(path)
            if record is not None:
                found |= set(record.includes)
        try:
            config = self.config(entry)
        except Exception:
            config = {}
        found |= hook_files(config, entry.origin.parent)
        data_path, data_name, kwargs = dataset_of(config)
        data_name = local_subset(data_name, kwargs.get("data_dir"))
        folder = local_folder(self.data_dir, data_path, data_name)
        if folder is not None:
            found.add(os.path.abspath(folder))
        elif self.data_dir is not None and isinstance(data_path, str) and data_path:
            found.add(os.path.abspath(self.data_dir / data_path / (data_name or "default")))
        self._dependencies[entry.name] = found
        return found

    def lint_ignores(self, entry: Entry) -> tuple[list[str], str]:
        """`metadata: {evaltasks_lint_ignore: [...]}` in the task's YAML."""
        where = f"the task's {LINT_IGNORE_KEY}"
        try:
            metadata = self.config(entry).get("metadata")
        except Exception:
            return [], where
        value = metadata.get(LINT_IGNORE_KEY) if isinstance(metadata, dict) else None
        if isinstance(value, str):
            return [value], where
        return ([str(rule) for rule in value] if isinstance(value, list) else []), where

    def has_local_data(self, entry: Entry, data_dir: Path | None) -> bool:
        from ..local_datasets import local_folder, local_subset
        from .build import dataset_of

        try:
            path, name, kwargs = dataset_of(self.config(entry))
        except Exception:
            return True  # its error is the item's to report
        return local_folder(data_dir, path, local_subset(name, kwargs.get("data_dir"))) is not None

    def suggestions(self) -> list[str]:
        if not self.yaml_index.complete:
            self.yaml_index.index_all()
            self.yaml_index.save_cache()
        return list(self.index)

    def slice_plan(self, entry: Entry, request: TaskRequest, data_dir: Path) -> LmEvalSlice:
        """`<data root>/<dataset_path>/<dataset_name or default>/`, for the first rows of
        every split the task reads; refused (naming the task) outside the data root."""
        from ..local_datasets import folder_for, local_subset
        from .build import dataset_of

        path, name, kwargs = dataset_of(self.config(entry))
        folder = folder_for(data_dir, path, local_subset(name, kwargs.get("data_dir")))
        if folder is None:
            raise DatasetError(
                f"task {entry.name!r}: dataset_path {path!r} names no dataset inside the data "
                f"root ({data_dir}); --evaltasks-save-data writes only there"
            )
        return LmEvalSlice(self, entry, folder)

    def prepare_slice(self, entry: Entry, folder: Path, count: int) -> PreparedSlice:
        """The first `count` rows of every split the task reads, from `datasets` (the Hub or
        its cache), for `folder`; written by `data_slices.write_slice` once every slice of the
        run is loaded."""
        from ...engine.data_slices import sliced
        from .adapter import LmEvalError, variant_config
        from .build import dataset_of, load_for_slice

        ref = self._ref(entry)
        with_hooks = ref.task if ref.via is None else variant_config(self.index, ref.via, ref.task)
        path, name, kwargs = dataset_of(self.config(entry))
        try:
            dataset, splits = load_for_slice(self.index, with_hooks)
        except LmEvalError:
            raise
        except Exception as exc:
            raise DatasetError(
                f"task {entry.name!r}: cannot save a slice of {path!r} (subset {name!r}): "
                f"{type(exc).__name__}: {exc}. Connect once, or commit a slice saved where the Hub "
                f"is reachable, to {folder}; {cache_advice('save from')}"
            ) from exc
        missing = [split for split in splits if split not in dataset]
        if missing:
            raise DatasetError(
                f"task {entry.name!r}: split(s) {', '.join(map(repr, missing))} not in dataset "
                f"{path!r} subset {name!r}; it has: {', '.join(dataset)}"
            )
        dataset_fields = {
            "dataset_path": path,
            "dataset_name": name,
            "dataset_kwargs": {k: v for k, v in kwargs.items() if isinstance(v, (str, int))},
        }
        return sliced(dataset, list(splits), count, entry.name, folder, dataset_fields)

    # rendering ------------------------------------------------------------------------------

    def render(
        self,
        entry: Entry,
        request: TaskRequest,
        run: RunSettings,
        template: ChatTemplate | None,
        data_dir: Path | None,
    ) -> UnitsRendered:
        from .adapter import LmEvalError, variant_config
        from .build import BuildOptions, build

        ref = self._ref(entry)
        chat = _chat_renderer(run, template)
        try:
            spec: str | dict[str, Any] = (
                ref.task if ref.via is None else variant_config(self.index, ref.via, ref.task)
            )
            built = build(
                self.index,
                spec,
                BuildOptions(
                    num_fewshot=request.num_fewshots,
                    data_dir=data_dir,
                    system_instruction=run.system_prompt,
                    chat=chat,
                    fewshot_as_multiturn=run.fewshot_as_multiturn,
                    limit=run.max_samples,
                ),
            )
        except DatasetError as exc:
            raise DatasetError(f"task {entry.name!r}: {exc}") from exc.__cause__
        except LmEvalError:
            raise
        except EvalTaskError:
            raise
        installed = _installed_folder()
        return _rendered(
            entry.name,
            ref,
            built,
            request,
            run,
            installed.resolve() if installed is not None else None,
            self._dependency_files(entry),
        )


def _line_of(path: Path, task: str) -> int:
    """The line of a YAML that names the task (`task: NAME`), else 1."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1
    pattern = re.compile(rf"^\s*-?\s*task\s*:\s*['\"]?{re.escape(task)}['\"]?\s*$")
    for number, line in enumerate(text.split("\n"), start=1):
        if pattern.match(line):
            return number
    return 1


def _chat_renderer(run: RunSettings, template: ChatTemplate | None) -> Any:
    """How the run renders a chat history for lm-eval (its model's `apply_chat_template`):
    the chat-API message list as lm-eval's API models send it, a template as a Hugging Face
    model's tokenizer renders it, or None for plain text."""
    from .build import messages_text

    if run.chat_template == "messages":
        return lambda history, add_generation_prompt: messages_text(history)
    if template is None:
        return None
    from ...engine.chat_template import apply_chat_template
    from ...errors import ChatTemplateError

    def render(history: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        try:
            return apply_chat_template(
                template,
                history,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=not add_generation_prompt,
            )
        except ChatTemplateError as exc:
            if "rejected the messages" not in str(exc) or not any(
                message.get("role") == "system" for message in history
            ):
                raise
            # lm-eval's Hugging Face model retries without the system turn when a template
            # raises (templates of models without a system role do)
            kept = [message for message in history if message.get("role") != "system"]
            return apply_chat_template(
                template,
                kept,
                add_generation_prompt=add_generation_prompt,
                continue_final_message=not add_generation_prompt,
            )

    return render


def _rendered(
    label: str,
    ref: LmEvalRef,
    built: Any,
    request: TaskRequest,
    run: RunSettings,
    installed: Path | None,
    dependencies: set[str],
) -> UnitsRendered:
    """lm-eval's built requests as rendered units, with the `[task]` fields they record."""
    from .adapter import lm_eval_version
    from .build import plain_arguments

    config = dict(built.config)
    header: dict[str, Any] = {"task": built.name}
    if ref.via is not None:
        header["group"] = ref.via
    header["config_source"] = _source_text(ref.yaml_path, installed)
    path = config.pop("dataset_path", None)
    name = config.pop("dataset_name", None)
    header["dataset"] = f"{path} / {name or 'default'}"
    for key in ("dataset_kwargs", "custom_dataset"):
        if key in config:
            header[key] = config.pop(key)
    header["eval_split"] = built.eval_split
    header["fewshot_split"] = built.fewshot_split
    for key in ("test_split", "validation_split", "training_split", "fewshot_split"):
        config.pop(key, None)
    shots = config.pop("num_fewshot", 0) or 0
    header["num_fewshot"] = shots
    if shots != request.num_fewshots:
        header["num_fewshot_note"] = (
            f"asked for {request.num_fewshots}; the config fixes num_fewshot: {shots}, and "
            f"lm-eval keeps it"
        )
    header["sampler"] = config.pop("sampler", "default")
    header["output_type"] = config.pop("output_type", None)
    for key in ("repeats", "generation_kwargs", "metric_list", "filter_list"):
        if key in config:
            value = config.pop(key)
            if key == "repeats" and value == 1:
                continue
            header[{"metric_list": "metrics", "filter_list": "filters"}.get(key, key)] = value
    header.update(config)
    header["fewshot_pool"] = (
        "not loaded (0-shot)" if built.pool_size is None or not shots else f"{built.pool_size} docs"
    )
    settings = {UPSTREAM_SETTING: _json(lm_eval_version())}
    if run.chat_template is not None:
        settings["fewshot_as_multiturn"] = _json(run.fewshot_as_multiturn)
    splits = (built.eval_split or "test", built.fewshot_split or built.eval_split or "test")
    units = [
        _unit(doc, position, run, plain_arguments, splits)
        for position, doc in enumerate(built.docs)
    ]
    pool = built.pool_size
    return UnitsRendered(
        name=label,
        version=built.version,
        header=header,
        settings=settings,
        units=units,
        total=built.total,
        inputs={*built.data_files, *dependencies},
        lint=LintTask(
            pool_is_eval=shots > 0 and built.fewshot_split == built.eval_split,
            pool_short=f"{pool} docs for {shots} shots"
            if shots and isinstance(pool, int) and pool < shots
            else None,
        ),
        kind=KIND,
        caches=dataset_caches(),
        upstream=Upstream(
            name=KIND,
            setting=UPSTREAM_SETTING,
            owned=header["config_source"].startswith(OWN_PREFIX),
            config="YAML",
        ),
        ids="ids are lm-eval's doc ids, from 0",
        shots=shots,
    )


def _json(value: Any) -> str:
    from ...engine.line_text import file_json

    return file_json(value)


def _source_text(path: Path | None, installed: Path | None) -> str:
    """Where a task's YAML is, as recorded: inside lm-eval's installed folder `lm_eval:tasks/...`
    (a file the user does not own), else its path (made relative to the root when written)."""
    if path is None:
        return "inline"
    if installed is not None:
        try:
            return OWN_PREFIX + "tasks/" + path.resolve().relative_to(installed).as_posix()
        except ValueError:
            pass
    return str(path.resolve())


def _unit(
    doc: Any, position: int, run: RunSettings, plain: Any, splits: tuple[str, str]
) -> RenderedUnit:
    """One doc's requests as a unit: the canonical fields, what is shown, what is exported,
    and what a port compares (`splits`: the evaluation and few-shot splits, its rows' names)."""
    requests = [
        {"type": request.request_type, "arguments": plain(request.arguments),
         "repeats": request.repeats}
        for request in doc.requests
    ]  # fmt: skip
    target = _plain_target(doc.target)
    fields = {"requests": requests, "target": target, "fewshot_ids": doc.fewshot_ids}
    kinds = list(dict.fromkeys(request["type"] for request in requests))
    contexts = [request["arguments"][0] for request in requests]
    shown: list[tuple[str, Any]] = [
        ("requests", f"{', '.join(kinds)} x {len(requests)}"),
        ("target", target),
        ("fewshot_ids", ", ".join(str(i) for i in doc.fewshot_ids) or "-"),
    ]
    how = (
        "plain text"
        if run.chat_template is None
        else "chat messages"
        if run.chat_template == "messages"
        else f"chat template {run.chat_template}"
    )
    texts: list[tuple[str, str]] = []
    rolling = kinds == ["loglikelihood_rolling"]
    distinct = list(dict.fromkeys(c for c in contexts if isinstance(c, str)))
    if rolling:
        texts.append(("text (loglikelihood_rolling)", str(contexts[0]) if contexts else ""))
    elif len(distinct) <= 1:
        texts.append((f"context ({how})", distinct[0] if distinct else ""))
    else:
        for number, context in enumerate(distinct, start=1):
            texts.append((f"context {number} of {len(distinct)} ({how})", context))
    continuations = [
        request["arguments"][1]
        for request in requests
        if request["type"] == "loglikelihood" and len(request["arguments"]) > 1
    ]
    if continuations and len(distinct) <= 1:
        shown.append(("continuations", continuations))
    elif continuations:
        shown.append(("continuation", continuations[0] if len(set(map(str, continuations))) == 1
                      else continuations))  # fmt: skip
    generation = [
        request["arguments"][1]
        for request in requests
        if request["type"] == "generate_until" and len(request["arguments"]) > 1
    ]
    if generation:
        shown.append(("generation", generation[0]))
    if requests and requests[0]["repeats"] != 1:
        shown.append(("repeats", requests[0]["repeats"]))
    export = {
        "doc_id": doc.doc_id,
        "position": position,
        "request_type": kinds[0] if len(kinds) == 1 else kinds,
        "requests": [
            {
                "type": request["type"],
                "arguments": request["arguments"],
                "idx": index,
                "repeats": request["repeats"],
            }
            for index, request in enumerate(requests)
        ],
        "contexts": contexts,
        "continuations": continuations,
        "generation_kwargs": generation[0] if generation else None,
        "target": target,
        "fewshot_ids": doc.fewshot_ids,
        "prompt": contexts[0] if contexts else None,
    }
    label = str(doc.doc_id)
    lint = _lint_doc(label, requests, target, doc.fewshot_ids)
    port = _port_doc(doc, contexts, continuations, generation, target, splits)
    if run.chat_template is not None and port.prompt:  # lm-eval templated it: what is sent
        port = replace(port, chat=port.prompt)
    return RenderedUnit(label, position, fields, shown, texts, export, lint, port)


def _port_doc(
    doc: Any,
    contexts: list[Any],
    continuations: list[Any],
    generation: list[Any],
    target: Any,
    splits: tuple[str, str],
) -> PortDoc:
    """A doc as a port compares it: the first context, the continuations scored, the target as
    the text of the choice it names (lm-eval's multiple-choice target is an index), the few-shot
    examples by their rows in the few-shot split, and what ends a generation."""
    choices = tuple(str(c) for c in continuations)
    gold = target[0] if isinstance(target, list) and target else target
    if isinstance(gold, int) and not isinstance(gold, bool) and 0 <= gold < len(choices):
        text = choices[gold]
    else:
        text = str(gold)
    kwargs = generation[0] if generation and isinstance(generation[0], dict) else {}
    until = kwargs.get("until") or []
    stops = (until,) if isinstance(until, str) else tuple(str(s) for s in until)
    maximum = kwargs.get("max_gen_toks")
    return PortDoc(
        row=f"{splits[0]}/{doc.doc_id}",
        prompt=str(contexts[0]) if contexts else "",
        choices=choices,
        target=text,
        fewshot_rows=tuple(f"{splits[1]}/{i}" for i in doc.fewshot_ids),
        stops=stops if generation else (),
        max_tokens=maximum if isinstance(maximum, int) else None,
        generates=bool(generation),
        columns=doc.columns,
    )


def _lint_doc(
    label: str, requests: list[dict[str, Any]], target: Any, fewshot_ids: list[Any]
) -> LintDoc:
    """A doc's requests as the lint rules read them: a `loglikelihood` request scores its
    continuation appended to its context (never a prompt continued freely); a
    `generate_until` request generates until its `until` strings, within `max_gen_toks`."""
    contexts = [r["arguments"][0] for r in requests if r.get("arguments")]
    first = contexts[0] if contexts and isinstance(contexts[0], str) else ""
    scored_first = bool(requests) and requests[0].get("type") == "loglikelihood"
    pairs = [
        (r["arguments"][0], r["arguments"][1])
        for r in requests
        if r.get("type") == "loglikelihood" and len(r.get("arguments", [])) > 1
    ]
    joins = [(c, [k]) for c, k in pairs if isinstance(c, str) and isinstance(k, str)]
    rolling = bool(requests) and requests[0].get("type") == "loglikelihood_rolling"
    blank = (
        not rolling
        and bool(contexts)
        and not any(isinstance(c, str) and c.strip() for c in contexts)
    )
    continuations = [k for _, k in pairs]
    single_context = len(set(map(repr, contexts))) <= 1
    choices = [r for r in requests if r.get("type") == "loglikelihood"]
    golds = [target] if isinstance(target, str) else [t for t in target if isinstance(t, str)] \
        if isinstance(target, list) else []  # fmt: skip
    generation = _generation_kwargs(requests)
    until = generation.get("until")
    stops = [until] if isinstance(until, str) else until or []
    size = generation.get("max_gen_toks")
    ids = [i for i in fewshot_ids if i is not None]
    return LintDoc(
        label=label,
        prompt_end="" if scored_first else first[-1:],
        joins=joins,
        blank_query=blank,
        scored=[k for k in continuations if isinstance(k, str)],
        choice_keys=tuple(map(repr, continuations)) if single_context else (),
        counted=len(choices) if len(choices) > 1 else 0,
        asked=repr([r.get("arguments") for r in requests]),
        golds=golds,
        stops=[stop for stop in stops if isinstance(stop, str) and stop],
        max_tokens=size if isinstance(size, int) else None,
        fewshots_repeat=len(set(map(repr, ids))) < len(ids),
    )


def _generation_kwargs(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The first `generate_until` request's generation arguments (empty: none)."""
    for request in requests:
        if request.get("type") == "generate_until" and len(request.get("arguments", [])) > 1:
            kwargs = request["arguments"][1]
            return kwargs if isinstance(kwargs, dict) else {}
    return {}


def _plain_target(target: Any) -> Any:
    from .build import jsonable

    return jsonable(target)


@dataclass
class LmEvalSlice:
    """One lm-eval task's slice to save (a `data_slices.SlicePlan`): tasks sharing a dataset
    folder share the first one's slice."""

    source: LmEvalYaml
    entry: Entry
    directory: Path

    def merge(self, other: SlicePlan) -> None:
        return None  # the first task's splits are the folder's

    def prepare(self, count: int, root: Path | None = None) -> list[PreparedSlice]:
        return [self.source.prepare_slice(self.entry, self.directory, count)]


SOURCE_KIND = SourceKind(KIND, is_lm_eval_folder, LmEvalYaml)
"""lm-eval's YAML folders as a kind of task source (`sources.SOURCE_KINDS`)."""

__all__ = [
    "CACHE_KEY",
    "KIND",
    "RECORDS_VERSION",
    "SOURCE_KIND",
    "FileRecord",
    "LmEvalRef",
    "LmEvalYaml",
    "environment_key",
    "is_lm_eval_folder",
]
"""`CACHE_KEY`, `RECORDS_VERSION`, `FileRecord` and `environment_key` are the index's
(`sources/lm_eval/index`), importable from here as before."""
