"""Where a run writes besides its snapshots (the report, `$GITHUB_STEP_SUMMARY`, the export,
the results file): each checked before the run, so a path that cannot be written is a usage
error that names the option, not a traceback after the run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from .startup import shown

if TYPE_CHECKING:
    from .options import Options

ENV = "GITHUB_STEP_SUMMARY"
"""The file GitHub Actions shows as a job step's summary; the report is appended to it."""


def check_destinations(options: Options) -> None:
    """Every file the run will write must be writable: else a usage error."""
    problems: list[str] = []
    if options.report is not None:
        problems += report_problems(options.report)
    if options.export is not None and not problems:
        problems += export_problems(options.export, options.report)
    if options.results is not None and not problems:
        others = {"--evaltasks-report": options.report, "--evaltasks-export": options.export}
        problems += results_problems(options.results, others)
    if problems:
        raise pytest.UsageError("\n".join(problems))


def report_problems(
    report: Path | None,
    environ: Mapping[str, str] = os.environ,
    option: str = "--evaltasks-report",
) -> list[str]:
    """Why the report could not be written to `report` (given as `option`) or appended to
    `$GITHUB_STEP_SUMMARY`, checked before the run (a usage error then, not a traceback after
    it)."""
    problems = []
    where = f"{option}={shown(report)}" if report is not None else option
    if report is None:
        pass
    elif report.is_dir():
        problems.append(
            f"{where}: that is a directory; name a file, e.g. "
            f"{option}={shown(report / 'evaltasks-report.md')}"
        )
    else:
        problem = folder_problem(report.parent)
        if problem:
            problems.append(f"{where}: {problem}")
    value = environ.get(ENV, "")
    if value:
        summary = Path(value)
        where = f"{ENV}={value}"
        if summary.is_dir():
            problems.append(f"{where} is a directory; it must name a file (the report is appended)")
        elif not summary.parent.is_dir():
            problems.append(
                f"{where}: its folder {summary.parent} does not exist (unset {ENV}, "
                f"or point it at a file in an existing folder)"
            )
        elif not os.access(summary if summary.exists() else summary.parent, os.W_OK):
            problems.append(f"{where} is not writable")
    return problems


def folder_problem(folder: Path) -> str | None:
    """Why a file cannot be written in `folder` (created when missing), or None."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return f"{shown(existing)} is a file, so the folder {shown(folder)} cannot be created"
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "folder" if existing == folder else f"folder {shown(folder)} cannot be created in"
        return f"the {what} {shown(existing)} is not writable"
    return None


def export_problems(path: Path, report: Path | None) -> list[str]:
    """Why the export could not be written to `path`, checked before the run (a usage error)."""
    where = f"--evaltasks-export={shown(path)}"
    if path.is_dir():
        return [
            f"{where}: that is a directory; name a file, e.g. "
            f"--evaltasks-export={shown(path / 'prompts.jsonl')}"
        ]
    if report is not None and os.path.abspath(report) == os.path.abspath(path):
        return [f"{where}: --evaltasks-report names the same file; give each its own"]
    problem = folder_problem(path.parent)
    return [f"{where}: {problem}"] if problem else []


def results_problems(results: Path, others: Mapping[str, Path | None]) -> list[str]:
    """Why `--evaltasks-results` cannot be written, checked before the run: a folder, a folder
    that cannot be created, or the file another option writes (`others`: option -> path)."""
    where = f"--evaltasks-results={results}"
    if results.is_dir():
        return [f"{where}: that is a directory; name a file, e.g. {where}/results.json"]
    for option, other in others.items():
        if other is not None and _same_path(results, other):
            return [f"{where}: {option} writes that file too; name another"]
    problem = folder_problem(results.parent)
    return [f"{where}: {problem}"] if problem else []


def _same_path(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return one == other
