"""pytest hooks: `--evaltasks` turns requested tasks into snapshot-checked items.

Hooks only wire things together; the work is in the engine, `snapshot_format`,
`version_gate`, `snapshot_extension` and `items`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..engine.task_string import ALL_TASKS
from ..errors import EvalTaskError
from ..snapshot.syrupy_extension import SNAPSHOT_SUFFIX
from .items import (
    COLLECTOR_NAME,
    CONTEXT_KEY,
    EvalTasksCollector,
    EvalTasksWarning,
    RunContext,
    result_of,
)
from .options import Options, add_options, resolve_options

if TYPE_CHECKING:
    from ..engine.chat_template import ChatTemplate
    from ..engine.registry import Registry
    from ..engine.task_string import TaskRequest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the `--evaltasks*` options."""
    add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """`--evaltasks-list` prints the registry and exits before any collection."""
    if not config.option.evaltasks_list:
        return None
    from _pytest.config import create_terminal_writer

    config._do_configure()
    try:
        registry = _build_registry(resolve_options(config))
        writer = create_terminal_writer(config)
        writer.line(f"{len(registry.names)} registered tasks:")
        width = max((len(name) for name in registry.names), default=0)
        for name in registry.names:
            version = str(registry.configs[name].version)
            writer.line(f"  {name:<{width}}  version {version:<4} {registry.origins[name]}")
        for broken in registry.broken:
            writer.line(f"failed to import: {broken.describe()}", red=True)
    finally:
        config._ensure_unconfigure()
    return 0


def pytest_configure(config: pytest.Config) -> None:
    """Validate everything before collection, so mistakes are usage errors (exit code 4)."""
    config.addinivalue_line("markers", "evaltask: a snapshot check of one evaluation task")
    if config.option.evaltasks is None:
        return
    options = resolve_options(config)
    if options.problems:
        raise pytest.UsageError("\n".join(options.problems))
    registry = _build_registry(options)
    for broken in registry.broken:
        config.issue_config_time_warning(
            EvalTasksWarning(f"task module failed to import: {broken.describe()}"), stacklevel=2
        )
    pairs = _resolve(registry, options)
    template = _load_template(options)
    if template is not None:
        digest = hashlib.sha256(
            f"{template.source}\x00{template.bos_token}\x00{template.eos_token}".encode()
        ).hexdigest()
        options = replace(options, run=replace(options.run, chat_template_digest=digest))
    config.stash[CONTEXT_KEY] = RunContext(
        options=options, registry=registry, pairs=pairs, template=template
    )


def _build_registry(options: Options) -> Registry:
    """The registry, with its errors as usage errors."""
    from ..engine.registry import Registry

    try:
        return Registry(options.task_dirs, options.custom_tasks, options.data_dir)
    except EvalTaskError as exc:
        raise pytest.UsageError(str(exc)) from None


def _resolve(registry: Registry, options: Options) -> list[tuple[str, TaskRequest]]:
    """Task string to (name, request) pairs, with its errors as usage errors."""
    assert options.spec is not None
    try:
        return registry.resolve(options.spec)
    except EvalTaskError as exc:
        raise pytest.UsageError(f"--evaltasks {options.spec!r}: {exc}") from None


def _load_template(options: Options) -> ChatTemplate | None:
    """The chat template named by the option, loaded once for the whole run."""
    from ..snapshot.format import MESSAGES

    name = options.run.chat_template
    if name is None or name == MESSAGES:
        return None
    from ..engine.chat_template import load_chat_template

    candidate = Path(name)
    try:
        return load_chat_template(str(candidate) if candidate.exists() else name)
    except EvalTaskError as exc:
        raise pytest.UsageError(f"--evaltasks-chat-template: {exc}") from None


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    """Say up front what will be checked, against which snapshots and data."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None:
        return None
    options = context.options
    mode = "update" if options.update else "compare"
    return [
        f"evaltasks: {len(context.pairs)} tasks from {options.spec!r} ({mode} mode)",
        f"evaltasks: snapshots in {_shown(options.snapshot_dir)}, data in "
        f"{_shown(options.data_dir)}",
    ]


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
    collector = EvalTasksCollector.from_parent(
        session, name=COLLECTOR_NAME, nodeid=COLLECTOR_NAME, context=context
    )
    collected = collector.collect()
    items[:0] = collected
    # Tell the terminal (and `--collect-only`) about them, as a real collector's report would.
    report = pytest.CollectReport(collector.nodeid, "passed", None, list(collected))
    session.ihook.pytest_collectreport(report=report)


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Tasks checked, docs rendered, snapshots written/unchanged/changed, bumps needed."""
    context = config.stash.get(CONTEXT_KEY, None)
    if context is None:
        return
    results = list(_results(terminalreporter))
    if not results:
        return
    written = sum(1 for r in results if r.get("written"))
    unchanged = sum(1 for r in results if r.get("outcome") == "same")
    changed = sum(
        1 for r in results if r.get("outcome") in ("changed", "refused") and not r.get("written")
    )
    new = sum(1 for r in results if r.get("outcome") == "new" and not r.get("written"))
    bumps = sorted(r["task"] for r in results if r.get("needs_bump"))
    docs = sum(int(r.get("docs", 0)) for r in results)
    writer = terminalreporter
    writer.section("evaltasks")
    writer.line(f"{len(results)} tasks checked, {docs} docs rendered")
    writer.line(
        f"snapshots: {unchanged} unchanged, {changed} changed, {new} missing, {written} written"
    )
    if bumps:
        many = len(bumps) != 1
        writer.line(
            f"{len(bumps)} task{'s' if many else ''} need{'' if many else 's'} a version bump:",
            red=True,
        )
        for name in bumps:
            writer.line(f"  {name}")
    if context.options.spec and context.options.spec.strip() == ALL_TASKS:
        _report_stale_snapshots(writer, context)


def _results(reporter: pytest.TerminalReporter) -> Iterator[dict[str, Any]]:
    """One result per task item, from call-phase reports (works across xdist workers)."""
    for reports in reporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) == "call":
                result = result_of(report)
                if result is not None:
                    yield result


def _report_stale_snapshots(writer: pytest.TerminalReporter, context: RunContext) -> None:
    """Snapshot files whose task is no longer registered (never deleted automatically)."""
    from ..snapshot.format import parse_snapshot

    directory = context.options.snapshot_dir
    stale: list[str] = []
    for path in sorted(directory.glob(f"*.{SNAPSHOT_SUFFIX}")) if directory.is_dir() else []:
        try:
            recorded = parse_snapshot(path.read_text(encoding="utf-8")).task.get("name", "")
        except (OSError, UnicodeDecodeError, ValueError):
            stale.append(f"{path.name} (unreadable)")
            continue
        base = recorded.rsplit("|", 1)[0].split("@", 1)[0]
        if base not in context.registry.configs:
            stale.append(f"{path.name} (task {base!r})")
    if stale:
        writer.line(f"{len(stale)} snapshot files belong to no registered task:", yellow=True)
        for entry in stale:
            writer.line(f"  {directory / entry}")
