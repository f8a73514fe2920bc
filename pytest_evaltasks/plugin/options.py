"""Command-line and ini options, resolved into one plain settings object.

CLI paths are relative to the directory pytest was started in, ini paths to the ini file's
directory; never to `rootdir`, which pytest may derive from an option value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..snapshot.format import RunSettings


@dataclass(frozen=True)
class Options:
    """Everything the plugin needs from the command line and the ini file."""

    spec: str | None
    task_dirs: list[Path]
    custom_tasks: list[Path]
    data_dir: Path
    snapshot_dir: Path
    run: RunSettings
    list_tasks: bool = False
    allow_unversioned: bool = False
    update: bool = False
    problems: list[str] = field(default_factory=list)


def add_options(parser: pytest.Parser) -> None:
    """Register `--evaltasks*` options and their ini equivalents."""
    group = parser.getgroup("evaltasks", "snapshot tests of evaluation-task prompts")
    group.addoption(
        "--evaltasks",
        metavar="SPEC",
        help="task string (e.g. 'mmlu|5,gsm8k'), a file of task strings, or 'all'",
    )
    group.addoption(
        "--evaltasks-dir",
        action="append",
        metavar="DIR",
        help="directory of task modules with a TASKS_TABLE (repeatable; default: tasks)",
    )
    group.addoption("--evaltasks-custom", action="append", metavar="FILE", help="custom task file")
    group.addoption(
        "--evaltasks-data", metavar="DIR", help="local data root (default: <first task dir>/data)"
    )
    group.addoption(
        "--evaltasks-docs", type=int, metavar="N", help="docs shown in full (default 3)"
    )
    group.addoption(
        "--evaltasks-max-samples", type=int, metavar="N", help="render only the first N docs"
    )
    group.addoption("--evaltasks-system-prompt", metavar="TEXT", help="system prompt to prepend")
    group.addoption(
        "--evaltasks-chat-template",
        metavar="NAME|PATH",
        help="also render through a chat template: a bundled name (chatml, llama3), a .jinja "
        "file, a tokenizer_config.json, or 'messages' for the chat-API message list",
    )
    group.addoption(
        "--evaltasks-list",
        nargs="?",
        const="",
        default=None,
        metavar="FILTER",
        help="list registered tasks (a task string or name prefix narrows it) and exit; "
        "non-zero when a task module is broken",
    )
    group.addoption(
        "--evaltasks-save-data",
        type=int,
        metavar="N",
        help="save the first N rows of every split the requested tasks read, from the Hub "
        "(or its cache) into the data root, and exit: later runs check them offline",
    )
    group.addoption(
        "--evaltasks-snapshot-dir",
        metavar="DIR",
        help="where snapshots live (default: <first task dir>/__snapshots__)",
    )
    group.addoption(
        "--evaltasks-allow-unversioned",
        action="store_true",
        help="let --snapshot-update record a prompt change without a version bump",
    )
    parser.addini("evaltasks_dir", "task directories", type="paths", default=[])
    parser.addini("evaltasks_custom", "custom task files", type="paths", default=[])
    parser.addini("evaltasks_data", "local data root", default="")
    parser.addini("evaltasks_snapshot_dir", "snapshot directory", default="")
    parser.addini("evaltasks_docs", "docs shown in full per snapshot", default="")


def resolve_options(config: pytest.Config) -> Options:
    """Read options and ini values into absolute paths and typed settings."""
    cwd = config.invocation_params.dir
    ini_dir = config.inipath.parent if config.inipath else cwd
    opt = config.option
    task_dirs = _paths(cwd, opt.evaltasks_dir) or list(config.getini("evaltasks_dir"))
    task_dirs = task_dirs or [cwd / "tasks"]
    custom = _paths(cwd, opt.evaltasks_custom) or list(config.getini("evaltasks_custom"))
    data_dir = _one_path(cwd, opt.evaltasks_data) or _one_path(
        ini_dir, config.getini("evaltasks_data")
    )
    snapshot_dir = _one_path(cwd, opt.evaltasks_snapshot_dir) or _one_path(
        ini_dir, config.getini("evaltasks_snapshot_dir")
    )
    problems: list[str] = []
    docs = _count(opt.evaltasks_docs, config.getini("evaltasks_docs"), "--evaltasks-docs", problems)
    max_samples = opt.evaltasks_max_samples
    if max_samples is not None and max_samples < 1:
        problems.append(f"--evaltasks-max-samples must be at least 1, got {max_samples}")
    return Options(
        spec=opt.evaltasks,
        task_dirs=[Path(p) for p in task_dirs],
        custom_tasks=[Path(p) for p in custom],
        data_dir=data_dir or Path(task_dirs[0]) / "data",
        snapshot_dir=snapshot_dir or Path(task_dirs[0]) / "__snapshots__",
        run=RunSettings(
            system_prompt=opt.evaltasks_system_prompt,
            chat_template=opt.evaltasks_chat_template,
            docs_shown=docs,
            max_samples=max_samples,
        ),
        list_tasks=opt.evaltasks_list is not None,
        allow_unversioned=bool(opt.evaltasks_allow_unversioned),
        update=bool(getattr(opt, "update_snapshots", False)),
        problems=problems,
    )


def _paths(base: Path, values: list[str] | None) -> list[Path]:
    """CLI paths made absolute against the invocation directory."""
    return [(base / value).resolve() for value in values or []]


def _one_path(base: Path, value: str | None) -> Path | None:
    """One optional path made absolute against `base`."""
    return (base / value).resolve() if value else None


def _count(cli: int | None, ini: str, name: str, problems: list[str]) -> int | None:
    """A non-negative count from the CLI, else the ini file."""
    raw: object = cli if cli is not None else (ini or None)
    if raw is None:
        return None
    try:
        value = int(str(raw))
    except ValueError:
        problems.append(f"{name} must be a whole number, got {raw!r}")
        return None
    if value < 0:
        problems.append(f"{name} must be 0 or more, got {value}")
        return None
    return value
