"""pytest hooks: `--evaltasks` turns requested tasks into snapshot-checked items.

Hooks only wire things together; the work is in the engine, the snapshot layer (format, gate,
failure reports, storage, the syrupy extension), and this layer's `plan`, `items` and `summary`.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import EvalTaskError
from .command_line import add_options, take_node_ids
from .state import CONTEXT_KEY, LOOKAHEAD_KEY, RESULTS_KEY

if TYPE_CHECKING:
    from ..engine.registry import Registry
    from ..engine.task import Task
    from ..engine.task_string import TaskRequest
    from .builds import FreshBuilds
    from .changes import Changes
    from .context import RunContext
    from .git import FilesAt
    from .options import Options
    from .plan import RunPlan
    from .renderings import Rendering
    from .report import Selection
    from .summary import ItemResult


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the `--evaltasks*` options, and start observing which files code opens (a
    helper that `conftest.py` imports reads its template before any task is loaded)."""
    from ..engine.inputs import install

    install()
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`--evaltasks-list` and `--evaltasks-save-data` do their job and exit before any
    collection.

    Private pytest API, kept: `config._do_configure()` and `config._ensure_unconfigure()`.
    pytest has no public way to configure a config (plugins' and conftest's `pytest_configure`,
    the terminal reporter, warning filters) and unconfigure it without starting a session, which
    would print a session header and a "no tests ran" line; pytest's own `--fixtures` and
    `--markers` call these two. pyproject.toml pins pytest to the majors tox tests (8 and 9).
    """
    for option, action in (("evaltasks_save_data", _save_data), ("evaltasks_show", _show)):
        if getattr(config.option, option) is not None:
            config._do_configure()
            try:
                return action(config)
            finally:
                config._ensure_unconfigure()
    selector = config.option.evaltasks_list
    if selector is None:
        return None
    from .listing import list_tasks
    from .options import resolve_options

    config._do_configure()
    try:
        options = resolve_options(config)
        wanted = _listed_names(selector)
        registry = _build_registry(options, config, wanted, prefix=True)
        listing = list_tasks(registry, selector, config.rootpath, options.snapshot_dir)
        if registry.partial and not listing.names:  # maybe in a module not imported
            registry = _build_registry(options, config)
            listing = list_tasks(registry, selector, config.rootpath, options.snapshot_dir)
        writer = _Writer(config)
        for line, colour in listing.lines:
            writer.line(line, **({colour: True} if colour else {}))
    finally:
        config._ensure_unconfigure()
    return listing.status


def _save_data(config: pytest.Config) -> int:
    """`--evaltasks-save-data N`: write slices of the requested tasks' datasets, then exit.

    Every slice is loaded and checked before any is written, so an error leaves the data root
    as it was; tasks reading one data source share one slice."""
    from ..engine.data_slices import PreparedSlice, SliceSource, prepare_slice, write_slice
    from ..files import WriteError
    from .options import resolve_options

    options = resolve_options(config)
    if options.spec is None:
        raise pytest.UsageError("--evaltasks-save-data needs --evaltasks to name the tasks")
    count = config.option.evaltasks_save_data
    if count < 1:
        raise pytest.UsageError(f"--evaltasks-save-data must be at least 1, got {count}")
    registry = _build_registry(options)
    writer = _Writer(config)
    slices: dict[Path, tuple[TaskRequest, SliceSource]] = {}
    problems: list[str] = []
    prepared: list[tuple[TaskRequest, PreparedSlice]] = []
    rendered: set[Path] = set()
    for request in _plan(registry, options).requests:
        try:
            if registry.renders_units(request.name):  # lm-eval's: its own dataset coordinates
                item = registry.prepare_slice(request, options.data_dir, count, config.rootpath)
                if item.directory not in rendered:
                    rendered.add(item.directory)
                    prepared.append((request, item))
                continue
            task: Task = registry.make_task(request)
            source = SliceSource.for_task(task, options.data_dir)
            slices.setdefault(source.directory, (request, source))[1].add(task)
        except EvalTaskError as exc:
            problems.append(f"{request.label}: {exc}")
    for request, source in slices.values():
        try:
            prepared.append((request, prepare_slice(source, count, config.rootpath)))
        except EvalTaskError as exc:
            problems.append(f"{request.label}: {exc}")
    if problems:
        for problem in problems:
            writer.line(problem, red=True)
        writer.line(f"nothing was saved: {_shown(options.data_dir)} is as it was", red=True)
        return 1
    for request, item in prepared:
        try:
            saved = write_slice(item)
        except WriteError as exc:
            writer.line(f"{request.label}: {exc}", red=True)
            return 1
        rows = ", ".join(
            f"{split} {rows} of {saved.sizes[split]}" for split, rows in saved.rows.items()
        )
        skipped = (
            f"; {', '.join(saved.skipped)} not saved (not in the dataset; read only at more "
            f"than 0 shots)"
            if saved.skipped
            else ""
        )
        writer.line(f"{request.label}: saved {rows} rows to {_shown(saved.directory)}{skipped}")
    return 0


def _show(config: pytest.Config) -> int:
    """`--evaltasks-show`: print the requested tasks' prompts, and exit."""
    from .options import resolve_options
    from .show import Selection, show

    options = resolve_options(config, take_node_ids(config))
    if options.problems:
        raise pytest.UsageError("\n".join(options.problems))
    if not options.specs and not options.node_ids:
        raise pytest.UsageError("--evaltasks-show needs --evaltasks to name the tasks")
    registry = _build_registry(options)
    rendering = _renderings(options, config.rootpath, config.invocation_params.dir)[0]
    writer = _Writer(config)
    selection = Selection.parse(config.option.evaltasks_show)
    requests = _plan(registry, options).requests
    shown = show(registry, requests, selection, rendering.run, rendering.template)
    for line in shown.lines:
        writer.line(line, **({"red": True} if line.startswith("no doc with id") else {}))
    return 1 if shown.problems else 0


class _Writer:
    """Lines for the commands that exit early, through the terminal reporter (public API; it
    colours as `--color` says) once the config is configured, else plain to stdout
    (`-p no:terminal`)."""

    def __init__(self, config: pytest.Config) -> None:
        self.reporter: pytest.TerminalReporter | None = config.pluginmanager.get_plugin(
            "terminalreporter"
        )

    def line(self, text: str, **markup: bool) -> None:
        """One line, with markup (`red=True`) where the terminal shows it."""
        if self.reporter is None:
            print(text, flush=True)
        else:
            self.reporter.write_line(text, **markup)


def pytest_configure(config: pytest.Config) -> None:
    """Validate everything before collection, so mistakes are usage errors (exit code 4)."""
    config.addinivalue_line("markers", "evaltask: a snapshot check of one evaluation task")
    node_ids = take_node_ids(config)
    option = config.option
    if option.evaltasks is None and option.evaltasks_changed is None and not node_ids:
        return
    if option.evaltasks_save_data is not None or option.evaltasks_show is not None:
        return
    _allow_bars_in_keywords(config)
    if not config.pluginmanager.has_plugin("syrupy"):
        raise pytest.UsageError(
            "--evaltasks needs syrupy's pytest plugin, which is disabled here (-p no:syrupy); "
            "remove that option"
        )
    from .context import RunContext
    from .options import resolve_options

    options = resolve_options(config, node_ids)
    if options.problems:
        raise pytest.UsageError("\n".join(options.problems))
    if options.report is not None:
        from .report import destination_problems

        unwritable = destination_problems(options.report)
        if unwritable:
            raise pytest.UsageError("\n".join(unwritable))
    if options.export is not None:
        from .export import destination_problems as export_problems

        unwritable = export_problems(options.export, options.report)
        if unwritable:
            raise pytest.UsageError("\n".join(unwritable))
    if options.results is not None:
        from .results import results_problems

        others = {"--evaltasks-report": options.report, "--evaltasks-export": options.export}
        unwritable = results_problems(options.results, others)
        if unwritable:
            raise pytest.UsageError("\n".join(unwritable))
    registry = _build_registry(options, config, _wanted_names(options))
    labels = _snapshot_labels(config, options)
    try:
        plan = _plan(registry, options, labels)
    except pytest.UsageError:
        if not registry.partial:
            raise
        registry = _build_registry(options, config)  # every module: the full error message
        plan = _plan(registry, options, labels)
    renderings = _renderings(options, config.rootpath, config.invocation_params.dir)
    _check_node_ids(options, plan, renderings)
    left_out: list[str] = []
    if options.local_only:
        plan, left_out = _local_only(plan, registry)
    changes = None
    if options.changed is not None:
        plan, changes = _only_changed(plan, registry, options, config.rootpath, renderings)
    base = _base_records(options)
    if base is not None:
        plan = _with_base_labels(plan, registry, options, base)
    from ..snapshot.storage import remove_stale_temp_files

    remove_stale_temp_files(options.snapshot_dir)
    within = _project_folder(config.rootpath)
    config.stash[CONTEXT_KEY] = RunContext(
        options=options,
        registry=registry,
        plan=plan,
        renderings=renderings,
        root=config.rootpath,
        within=within,
        fresh=_fresh_builds(options, config.rootpath, within),
        changes=changes,
        base=base,
        left_out=left_out,
    )
    from .summary import Collected

    every = options.report is not None or options.results is not None or options.details
    config.stash[RESULTS_KEY] = Collected(keep=every and not hasattr(config, "workerinput"))
    config.pluginmanager.register(_ResultCollector(config), "evaltasks-results")
    if options.export is not None:  # registered only when asked for: other runs pay nothing
        from .export import EXPORT_PLUGIN, Exporter

        order = {request.key: position for position, request in enumerate(plan.requests)}
        keys = [rendering.key for rendering in renderings]
        exporter = Exporter(options.export, order, keys, not hasattr(config, "workerinput"))
        config.pluginmanager.register(exporter, EXPORT_PLUGIN)


def _only_changed(
    plan: RunPlan, registry: Registry, options: Options, root: Path, renderings: list[Rendering]
) -> tuple[RunPlan, Changes]:
    """The plan narrowed to the tasks a change since the revision can affect."""
    import os

    from .changes import changed_files, select_changed

    in_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    try:
        changed = changed_files(root, options.changed or "", in_ci)
    except EvalTaskError as exc:
        raise pytest.UsageError(f"--evaltasks-changed: {exc}") from None
    templates = [Path(r.source) for r in renderings if r.source and Path(r.source).is_file()]
    # a task string filters: what it does not name is neither checked nor said to have changed
    planned = [n for n in dict.fromkeys(r.name for r in plan.requests) if n in registry.entries]
    changes = select_changed(registry, changed, root, options.snapshot_dir, templates, planned)
    requests = [request for request in plan.requests if request.name in changes.selected]
    return replace(plan, requests=requests), changes


def _local_only(plan: RunPlan, registry: Registry) -> tuple[RunPlan, list[str]]:
    """`--evaltasks-local-only`: the plan without the tasks whose data is not in the local data
    root, and their labels (said in the header and the summary: they are not checked)."""
    local: dict[str, bool] = {}
    for request in plan.requests:
        if request.name not in local:
            try:
                local[request.name] = registry.has_local_data(request.name)
            except EvalTaskError:
                local[request.name] = True  # its error is the item's to report
    kept = [request for request in plan.requests if local[request.name]]
    left = [request.label for request in plan.requests if not local[request.name]]
    return replace(plan, requests=kept), left


def _check_node_ids(options: Options, plan: RunPlan, renderings: list[Rendering]) -> None:
    """Node ids that narrow a task string must name its items: an empty run is a mistake."""
    if not options.node_ids or not options.specs:
        return
    from ..errors import did_you_mean
    from .renderings import item_name

    names = [
        item_name(request.label, key)
        for request in plan.requests
        for key in dict.fromkeys(
            [*(r.key for r in renderings), *plan.recorded.get(request.key, [])]
        )
    ]
    known = set(names)
    missing = [node for node in options.node_ids if node not in known]
    if missing:
        lines = [f"--evaltasks {options.spec!r} has no item for node id(s):"]
        lines += [f"  evaltasks::{node}{did_you_mean(node, names)}" for node in missing]
        raise pytest.UsageError("\n".join(lines))


def _base_records(options: Options) -> FilesAt | None:
    """The snapshot folder at `--evaltasks-base`; an unknown or unfetched revision is a usage
    error that says how to fetch it."""
    if options.base is None:
        return None
    from .git import GitError, files_at, toplevel

    try:
        return files_at(toplevel(options.snapshot_dir), options.base, options.snapshot_dir)
    except GitError as exc:
        raise pytest.UsageError(f"--evaltasks-base: {exc}") from None


def _with_base_labels(
    plan: RunPlan, registry: Registry, options: Options, base: FilesAt
) -> RunPlan:
    """Under `all`, a task still registered whose snapshot exists at the base but not in the
    working copy is checked at that shot count and rendering (deleting a snapshot must not
    quietly stop its check), instead of at the 0 shots `all` checks a task without snapshots
    at."""
    from .plan import base_requests

    if not any(spec.strip() == "all" for spec in options.specs):
        return plan
    extra = base_requests(registry, base.files, options.snapshot_dir)
    if not extra:
        return plan
    restored = {request.name for request, _ in extra}
    recorded = {key: list(keys) for key, keys in plan.recorded.items()}
    requests = [
        request
        for request in plan.requests
        if request.name not in restored or request.key in recorded
    ]
    for request, rendering in extra:
        keys = recorded.setdefault(request.key, [])
        if not keys:
            requests.append(request)
        if rendering not in keys:
            keys.append(rendering)
    return replace(plan, requests=requests, recorded=recorded)


def _project_folder(root: Path) -> Path:
    """Where the project's files live: the git checkout holding the root (a monorepo's helpers
    may sit beside it), else the root itself."""
    from .git import checkout_top

    return checkout_top(root) or root


def _fresh_builds(options: Options, root: Path, within: Path) -> FreshBuilds:
    """The fresh-process builder of this run (its processes start only when asked for)."""
    from .builds import FreshBuilds

    return FreshBuilds(
        task_dirs=options.task_dirs,
        custom_tasks=options.custom_tasks,
        data_dir=options.data_dir,
        root=root,
        within=within,
        lint=options.lint != "off",
        lint_ignore=options.lint_ignore,
    )


def _allow_bars_in_keywords(config: pytest.Config) -> None:
    """`-k "anatomy|5"`: `|` is not allowed in pytest's keyword expressions (neither in a name
    nor as an operator, pytest 8 and 9), so where one stands outside a quoted string, read `|`
    as `/`, under which each item's name is also a keyword (`-k "anatomy/5"` is the documented
    form). Decided from the text alone: pytest has no public API to parse an expression."""
    keyword = config.option.keyword
    if keyword and _bar_outside_quotes(keyword):
        config.option.keyword = keyword.replace("|", "/")


def _bar_outside_quotes(expression: str) -> bool:
    """Whether a `|` stands outside the `'...'` and `"..."` strings of an expression."""
    quote = ""
    for char in expression:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "|":
            return True
    return False


INDEX_KEY = "evaltasks/module-index"
"""Where the module index lives in pytest's cache."""


def _build_registry(
    options: Options,
    config: pytest.Config | None = None,
    wanted: list[str] | None = None,
    prefix: bool = False,
) -> Registry:
    """The registry, with its errors as usage errors. With `wanted` names (and pytest's cache
    at hand), only the task modules that can define them are imported (`module_index`), and
    only the lm-eval YAML files that can define them are parsed (`lm_eval_source`, whose
    index lives in the same cache; an xdist worker reads it and never writes it)."""
    from ..engine.registry import Registry

    only: list[Path] | None = None
    cache = getattr(config, "cache", None) if config is not None else None
    if wanted is not None and cache is not None:
        only = _indexed_modules(options, cache, wanted, prefix)
    worker = config is not None and hasattr(config, "workerinput")
    try:
        registry = Registry(
            options.task_dirs,
            options.custom_tasks,
            options.data_dir,
            only=only,
            wanted=wanted,
            cache=_ReadOnlyCache(cache) if worker and cache is not None else cache,
        )
    except EvalTaskError as exc:
        raise pytest.UsageError(str(exc)) from None
    if cache is not None:
        _save_index(cache, registry, config.rootpath if config is not None else Path.cwd())
    return registry


def _indexed_modules(
    options: Options, cache: Any, wanted: list[str], prefix: bool
) -> list[Path] | None:
    """The module files a run over `wanted` names must import; None: all of them."""
    from ..engine.module_index import ModuleIndex, environment_key, select_modules
    from ..engine.sources import LightevalModules, source_kind_of
    from ..engine.task_modules import discover

    candidates = [
        path
        for directory in options.task_dirs
        if directory.is_dir() and source_kind_of(directory) == LightevalModules.kind
        for path in discover(directory)
    ]
    index = ModuleIndex.from_json(cache.get(INDEX_KEY, None))
    selection = select_modules(index, candidates, wanted, environment_key(), prefix)
    if selection.modules is None or len(selection.modules) == len(candidates):
        return None
    return [*selection.modules, *options.custom_tasks]


class _ReadOnlyCache:
    """pytest's cache, read but never written (an xdist worker's: the controller writes)."""

    def __init__(self, cache: Any) -> None:
        self.cache = cache

    def get(self, key: str, default: Any) -> Any:
        return self.cache.get(key, default)


def _save_index(cache: Any, registry: Registry, root: Path) -> None:
    """Record what this run imported, for the next run's selection."""
    from ..engine.module_index import ModuleIndex, environment_key, updated

    index = ModuleIndex.from_json(cache.get(INDEX_KEY, None))
    fresh = updated(index, registry, _project_folder(root), environment_key())
    if fresh.records != index.records:
        cache.set(INDEX_KEY, fresh.to_json())


def _listed_names(selector: str) -> list[str] | None:
    """The names (or prefixes) `--evaltasks-list FILTER` asks for; None: every module."""
    from ..engine.task_string import parse_task_string

    if not selector.strip():
        return None
    try:
        return [request.name for request in parse_task_string(selector)]
    except EvalTaskError:
        return [selector.strip()]


def _wanted_names(options: Options) -> list[str] | None:
    """The task names a run's task strings ask for; None when it needs every module (`all`,
    a changed-only run, node ids alone, or a string that does not parse)."""
    from ..engine.task_string import ALL_TASKS, parse_task_string

    if not options.specs or options.changed is not None:
        return None
    names: list[str] = []
    for spec in options.specs:
        if spec.strip() == ALL_TASKS:
            return None
        try:
            names += [request.name for request in parse_task_string(spec)]
        except EvalTaskError:
            return None
    return names


LABELS_KEY = pytest.StashKey[list[tuple[str, "str | None"]]]()
"""Under `all`, the snapshot folder's files (by name) and the labels they record, as this
process read them: an xdist controller hands them to its workers."""

LABELS_INPUT = "evaltasks_snapshot_labels"
"""The `workerinput` entry that carries them."""


def _snapshot_labels(config: pytest.Config, options: Options) -> dict[Path, str | None] | None:
    """Under `all`, the snapshot folder's files and the labels they record: an xdist worker's
    are its controller's (one reading of the folder for the whole run: every worker plans, and
    so collects, the same items, without reading a header of every file again); None when the
    run does not need them."""
    from ..engine.task_string import ALL_TASKS

    if not any(spec.strip() == ALL_TASKS for spec in options.specs):
        return None
    folder = options.snapshot_dir
    given = getattr(config, "workerinput", {}).get(LABELS_INPUT)
    if given is not None:
        return {folder / name: label for name, label in given}
    from ..snapshot.storage import recorded_labels

    labels = recorded_labels(folder)
    if getattr(config.option, "dist", "no") != "no":  # kept only for an xdist controller
        config.stash[LABELS_KEY] = [(path.name, label) for path, label in labels.items()]
    return labels


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's controller, starting a worker: hand it this run's snapshot labels."""
    labels = node.config.stash.get(LABELS_KEY, None)
    if labels is not None:
        node.workerinput[LABELS_INPUT] = labels


def _plan(
    registry: Registry, options: Options, labels: dict[Path, str | None] | None = None
) -> RunPlan:
    """The items of this run, with task-string errors as usage errors."""
    from .plan import plan_run

    try:
        return plan_run(registry, options.specs, options.snapshot_dir, options.node_ids, labels)
    except EvalTaskError as exc:
        what = f"--evaltasks {options.spec!r}" if options.specs else "node ids"
        raise pytest.UsageError(f"{what}: {exc}") from None


def _renderings(options: Options, root: Path, cwd: Path) -> list[Rendering]:
    """The run's renderings, each template loaded once: the listed profiles, or the one the
    chat template and system prompt options describe; a bad one is a usage error."""
    from .renderings import base_rendering, resolve

    try:
        if options.renderings is None:
            return [base_rendering(options.run, root, cwd, options.tokens)]
        return resolve(options.renderings, options.run, root, cwd, options.tokens)
    except EvalTaskError as exc:
        what = "--evaltasks-chat-template" if options.renderings is None else "renderings"
        raise pytest.UsageError(f"{what}: {exc}") from None


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """Say up front what will be checked, against which snapshots and data."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None:
        return None
    from .summary import count

    options = context.options
    plan = context.plan
    mode = "update" if options.update else "compare"
    extra = []
    if plan.broken:
        extra.append(count(len(plan.broken), "broken task module"))
    if plan.orphans:
        extra.append(count(len(plan.orphans), "orphan snapshot"))
    registry = context.registry
    lines = [
        f"evaltasks: {count(len(plan.requests), 'task')} from "
        f"{repr(options.spec) if options.specs else 'the node ids given'}"
        + (f" and {', '.join(extra)}" if extra else "")
        + f" ({mode} mode)",
        f"evaltasks: snapshots in {_shown(options.snapshot_dir)}, data in "
        f"{_shown(options.data_dir)}",
    ]
    if context.changes is not None:
        lines.append(f"evaltasks: {context.changes.describe()}")
    if context.left_out:
        lines.append(
            f"evaltasks: {count(len(context.left_out), 'task')} left out, their data is not in "
            f"the local data root (--evaltasks-local-only): they are not checked"
        )
    for note in registry.partial_notes():
        lines.append(f"evaltasks: {note}")
    shadowed = context.registry.shadowed
    lines += [f"evaltasks: warning: {warning}" for warning in shadowed[:5]]
    if len(shadowed) > 5:
        lines.append(f"evaltasks: ... and {len(shadowed) - 5} more (pytest --evaltasks-list)")
    return lines + [f"evaltasks: {line}" if not line.startswith(" ") else line
                    for line in _broken_outside_run(context)]  # fmt: skip


def _broken_outside_run(context: RunContext) -> list[str]:
    """Task modules that failed to import while none of this run's tasks is in them: named in
    the summary section, which `-q` shows (the header, which `-q` hides, names them too)."""
    from .summary import count

    broken = context.registry.broken
    if not broken or context.plan.broken:  # under `all` they are failing items instead
        return []
    lines = [
        f"{count(len(broken), 'task module')} failed to import (none of this run's tasks is in "
        f"them; pytest --evaltasks-list shows the errors):"
    ]
    lines += [f"  {_shown(module.path)}: {module.exception}" for module in broken[:5]]
    if len(broken) > 5:
        lines.append(f"  ... and {len(broken) - 5} more")
    return lines


def _shown(path: Path) -> str:
    """A path relative to the working directory when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `--evaltasks` and no test paths named, collect only the task items."""
    if CONTEXT_KEY in config.stash and config.args_source != pytest.Config.ArgsSource.ARGS:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add the task items first, so `-k`, `-m` and `--lf` then select among them."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None:
        return
    from .items import COLLECTOR_NAME, EvalTasksCollector

    collector = EvalTasksCollector.from_parent(
        session, name=COLLECTOR_NAME, nodeid=COLLECTOR_NAME, context=context
    )
    collected = collector.collect()
    items[:0] = collected
    # Tell the terminal (and `--collect-only`) about them, as a real collector's report would.
    report = pytest.CollectReport(collector.nodeid, "passed", None, list(collected))
    session.ihook.pytest_collectreport(report=report)


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    """Fork the look-ahead process over the run's task items, when the run allows it."""
    config = session.config
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None or config.option.collectonly:
        return
    from .items import TaskItem
    from .lookahead import Lookahead, conditions_of, refusal

    tasks = [item for item in session.items if isinstance(item, TaskItem)]
    if refusal(conditions_of(config, context, len(tasks))) is None:
        ahead = Lookahead.start(tasks, context)
        if ahead is not None:
            config.stash[LOOKAHEAD_KEY] = ahead


class _ResultCollector:
    """Keeps each item's result as its report arrives (xdist workers' reports included).

    Registered as a plugin of its own in `pytest_configure`, because the report hook is given
    the report alone and the results belong to the run's config.
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Record an item's result with its call-phase report: the result the item finished
        in this process, or, for an xdist worker's report, the one its JSON carries."""
        if report.when != "call":
            return
        collected = self.config.stash[RESULTS_KEY]
        result = collected.finished.pop(report.nodeid, None)
        if result is not None:
            collected.add(result, report.outcome)
            return
        from .summary import RESULT_KEY, ItemResult

        for key, value in report.user_properties:
            if key == RESULT_KEY and isinstance(value, str):
                collected.add(ItemResult.from_json(value), report.outcome)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """End the fresh build processes; `--evaltasks-report`: write the Markdown report (on the
    xdist controller only)."""
    config = session.config
    context = config.stash.get(CONTEXT_KEY, None)
    if context is not None:
        context.fresh.close()
        ahead = config.stash.get(LOOKAHEAD_KEY, None)
        if ahead is not None:
            ahead.close()
        nothing = context.changes is not None and context.plan.size == 0
        if nothing and exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK  # a change that touches no task: success
        elif exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _empty_shard(config, context):
            session.exitstatus = pytest.ExitCode.OK  # pytest-split gave every item to others
        if context.options.export is not None and not hasattr(config, "workerinput"):
            _write_export(session)
    if context is None or hasattr(config, "workerinput"):
        return
    if context.options.report is None and context.options.results is None:
        return
    from .report import publish, selection_of, show_problems

    collected = config.stash[RESULTS_KEY]
    selection = selection_of(context)
    if context.options.report is not None:
        outcomes = {result.label: outcome for result, outcome in collected.kept}
        problems = publish(context.options.report, collected.summary(), outcomes, selection)
        if problems:  # checked before the run, so rare: said in the terminal, the exit code kept
            show_problems(config, problems)
    if context.options.results is not None:
        _write_results(session, context.options.results, selection, collected.kept)


def _empty_shard(config: pytest.Config, context: RunContext) -> bool:
    """A pytest-split group (`--splits N --group I`) of a run with items, given none of them."""
    option = config.option
    split = getattr(option, "splits", None) and getattr(option, "group", None)
    return bool(split) and context.plan.size > 0


def _write_results(
    session: pytest.Session,
    path: Path,
    selection: Selection,
    collected: list[tuple[ItemResult, str]],
) -> None:
    """`--evaltasks-results`: write the results file. A write that failed fails a run that
    passed: a shard's file missing from the merge, or an older one in its place, would be
    wrong."""
    from .report import show_problems
    from .results import shard_of, write

    problem = write(path, selection, collected, shard_of(session.config))
    if problem is None:
        return
    show_problems(session.config, [problem], name=RESULTS_PROBLEMS)
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


RESULTS_PROBLEMS = "evaltasks-results-problems"


def _write_export(session: pytest.Session) -> None:
    """`--evaltasks-export`: write the collected prompts (the controller, or the only process).
    A write that failed fails a run that passed: its file would be stale, or missing."""
    from .export import EXPORT_PLUGIN, Exporter

    exporter = session.config.pluginmanager.get_plugin(EXPORT_PLUGIN)
    if not isinstance(exporter, Exporter):
        return
    exporter.write()
    if exporter.problem is not None and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _export_lines(config: pytest.Config) -> list[tuple[str, str | None]]:
    """What became of `--evaltasks-export`, for the terminal summary (none on a worker)."""
    exporter = config.pluginmanager.get_plugin("evaltasks-export")
    if exporter is None or hasattr(config, "workerinput"):
        return []
    if exporter.problem is not None:
        return [(f"evaltasks: error: {exporter.problem}", "red")]
    if exporter.written is None:
        return []
    from .summary import count

    return [(f"{count(exporter.written, 'prompt')} exported to {_shown(exporter.path)}", None)]


def _results_lines(config: pytest.Config) -> list[tuple[str, str | None]]:
    """`--evaltasks-results`: where the results went, for the terminal summary (its failure
    is said in red at the end of the summary; nothing on a worker)."""
    path = config.stash[CONTEXT_KEY].options.results
    failed = config.pluginmanager.has_plugin(RESULTS_PROBLEMS)
    if path is None or failed or hasattr(config, "workerinput"):
        return []
    return [(f"results written to {_shown(path)}", None)]


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Tasks checked, docs rendered, outcomes, snapshots written, version bumps needed."""
    if CONTEXT_KEY not in config.stash:
        if "evaltask" in (config.option.markexpr or ""):
            terminalreporter.line(
                "evaltasks: task items exist only with --evaltasks: "
                'pytest --evaltasks all -m evaltask (or --evaltasks "mmlu|5", ...)',
                yellow=True,
            )
        return
    context = config.stash[CONTEXT_KEY]
    collected = config.stash[RESULTS_KEY]
    tally = collected.tally
    broken = _broken_outside_run(context)
    changes = context.changes
    nothing = changes is not None and context.plan.size == 0
    exported = _export_lines(config) + _results_lines(config)
    if not tally.items and not broken and not nothing and not exported:
        return
    terminalreporter.section("evaltasks")
    if changes is not None and nothing:
        terminalreporter.line(changes.describe(), green=True)
    for line, colour in tally.lines():
        terminalreporter.line(line, **({colour: True} if colour else {}))
    for line in broken:
        terminalreporter.line(line, yellow=True)
    if context.left_out:
        from .summary import count

        shown = ", ".join(context.left_out[:5]) + (" ..." if len(context.left_out) > 5 else "")
        terminalreporter.line(
            f"{count(len(context.left_out), 'task')} not checked, their data is not local "
            f"(--evaltasks-local-only): {shown}",
            yellow=True,
        )
    ahead = config.stash.get(LOOKAHEAD_KEY, None)
    if ahead is not None and config.get_verbosity() > 0:
        terminalreporter.line(ahead.line())
    if context.options.details and collected.kept:  # syrupy's --snapshot-details
        for line in collected.summary().detail_lines():
            terminalreporter.line(line)
    for line, colour in exported:
        terminalreporter.line(line, **({colour: True} if colour else {}))
    report = config.stash[CONTEXT_KEY].options.report
    written = not config.pluginmanager.has_plugin("evaltasks-report-problems")
    if report is not None and written and not hasattr(config, "workerinput"):
        terminalreporter.line(f"report written to {_shown(report)}")
