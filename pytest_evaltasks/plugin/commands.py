"""The commands that do their job and exit before any collection: `--evaltasks-list`,
`--evaltasks-show` and `--evaltasks-save-data`.

Private pytest API, kept: `config._do_configure()` and `config._ensure_unconfigure()`. pytest has
no public way to configure a config (plugins' and conftest's `pytest_configure`, the terminal
reporter, warning filters) and unconfigure it without starting a session, which would print a
session header and a "no tests ran" line; pytest's own `--fixtures` and `--markers` call these
two. pyproject.toml pins pytest to the majors tox tests (8 and 9).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..errors import EvalTaskError
from .command_line import take_node_ids
from .options import resolve_options
from .startup import build_registry, listed_names, plan_of, renderings_of, shown

if TYPE_CHECKING:
    from ..engine.data_slices import PreparedSlice, SlicePlan
    from ..engine.task_string import TaskRequest


def command_of(config: pytest.Config) -> Callable[[pytest.Config], int]:
    """The early-exit command the options ask for (save data before show, show before list)."""
    option = config.option
    if option.evaltasks_save_data is not None:
        return save_data
    if option.evaltasks_show is not None:
        return show_prompts
    return list_registered


def run_command(config: pytest.Config, command: Callable[[pytest.Config], int]) -> int:
    """Run a command inside a configured (then unconfigured) config."""
    config._do_configure()
    try:
        return command(config)
    finally:
        config._ensure_unconfigure()


def list_registered(config: pytest.Config) -> int:
    """`--evaltasks-list[=FILTER]`: the registered tasks by module; non-zero when a module is
    broken."""
    from .listing import list_tasks

    selector = config.option.evaltasks_list
    options = resolve_options(config)
    registry = build_registry(options, config, listed_names(selector), prefix=True)
    listing = list_tasks(registry, selector, options.root, options.snapshot_dir)
    if registry.partial and not listing.names:  # maybe in a module not imported
        registry = build_registry(options, config)
        listing = list_tasks(registry, selector, options.root, options.snapshot_dir)
    writer = Writer(config)
    for line, colour in listing.lines:
        writer.line(line, **({colour: True} if colour else {}))
    return listing.status


def save_data(config: pytest.Config) -> int:
    """`--evaltasks-save-data N`: write slices of the requested tasks' datasets.

    Every slice is loaded and checked before any is written, so an error leaves the data root
    as it was; tasks reading one data source share one slice."""
    from ..engine.data_slices import write_slice
    from ..files import WriteError

    options = resolve_options(config)
    if options.spec is None:
        raise pytest.UsageError("--evaltasks-save-data needs --evaltasks to name the tasks")
    count = config.option.evaltasks_save_data
    if count < 1:
        raise pytest.UsageError(f"--evaltasks-save-data must be at least 1, got {count}")
    registry = build_registry(options)
    writer = Writer(config)
    slices: dict[Path, tuple[TaskRequest, SlicePlan]] = {}
    problems: list[str] = []
    for request in plan_of(registry, options).requests:
        try:
            plan = registry.slice_plan(request, options.data_dir)
            slices.setdefault(plan.directory, (request, plan))[1].merge(plan)
        except EvalTaskError as exc:
            problems.append(f"{request.label}: {exc}")
    prepared: list[tuple[TaskRequest, PreparedSlice]] = []
    for request, plan in slices.values():
        try:
            prepared += [(request, item) for item in plan.prepare(count, options.root)]
        except EvalTaskError as exc:
            problems.append(f"{request.label}: {exc}")
    if problems:
        for problem in problems:
            writer.line(problem, red=True)
        writer.line(f"nothing was saved: {shown(options.data_dir)} is as it was", red=True)
        return 1
    for request, item in prepared:
        try:
            saved = write_slice(item)
        except WriteError as exc:
            writer.line(f"{request.label}: {exc}", red=True)
            return 1
        if saved.url is not None:
            (name,) = saved.rows
            where = shown(saved.directory / name)
            writer.line(f"{request.label}: saved {saved.url} whole to {where}")
            continue
        rows = ", ".join(
            f"{split} {rows} of {saved.sizes[split]}" for split, rows in saved.rows.items()
        )
        skipped = (
            f"; {', '.join(saved.skipped)} not saved (not in the dataset; read only at more "
            f"than 0 shots)"
            if saved.skipped
            else ""
        )
        writer.line(f"{request.label}: saved {rows} rows to {shown(saved.directory)}{skipped}")
    return 0


def show_prompts(config: pytest.Config) -> int:
    """`--evaltasks-show`: print the requested tasks' prompts."""
    from .show import Selection, show

    options = resolve_options(config, take_node_ids(config))
    if options.problems:
        raise pytest.UsageError("\n".join(options.problems))
    if not options.specs and not options.node_ids:
        raise pytest.UsageError("--evaltasks-show needs --evaltasks to name the tasks")
    registry = build_registry(options)
    rendering = renderings_of(options, options.root, config.invocation_params.dir)[0]
    writer = Writer(config)
    selection = Selection.parse(config.option.evaltasks_show)
    plan = plan_of(registry, options)
    shown_docs = show(registry, plan.requests, selection, rendering.run, rendering.template)
    if plan.ports:
        from .show import show_ports

        ported = show_ports(registry, options, plan.ports, selection, rendering)
        shown_docs.lines += ported.lines
        shown_docs.problems += ported.problems
    for line in shown_docs.lines:
        writer.line(line, **({"red": True} if line.startswith("no doc with id") else {}))
    return 1 if shown_docs.problems else 0


class Writer:
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
