"""`--evaltasks-report PATH`: the run as Markdown, for a pull request.

A table of every item (outcome, changed docs, version before and after), the lint findings, and
per task the readable failure from the gate inside a collapsed `<details>` block, capped in size
with a note of what was cut. With `GITHUB_STEP_SUMMARY` set, the same text is appended there,
so a GitHub Actions job shows it on its summary page.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..files import write_atomic
from .summary import ItemResult, RunSummary, count

DETAILS_LINES = 60
"""Lines of one task's failure shown in its `<details>` block."""
TOTAL_CHARS = 400_000
"""The report's size cap (GitHub's step summary takes up to 1 MiB)."""


def markdown(summary: RunSummary, outcomes: dict[str, str], mode: str) -> str:
    """The report. `outcomes` maps an item's label to pytest's outcome (passed, failed)."""
    results = summary.results
    lines = [f"## pytest-evaltasks: {count(len(results), 'item')} checked ({mode} mode)", ""]
    lines += [line for line, _ in summary.lines()]
    lines += [
        "",
        "| task | result | outcome | changed docs | version |",
        "|---|---|---|---|---|",
    ]
    for result in results:
        before = result.version_before if result.version_before is not None else "-"
        after = result.version_after if result.version_after is not None else "-"
        written = " (written)" if result.written else " (deleted)" if result.deleted else ""
        lines.append(
            f"| `{_cell(result.label)}` | {outcomes.get(result.label, '?')} | "
            f"{result.outcome.value}{written} | {result.changed_docs or ''} | "
            f"{_cell(before)} → {_cell(after)} |"
        )
    linted = [result for result in results if result.lint]
    if linted:
        lines += ["", "### Lint findings", ""]
        for result in linted:
            lines += [f"- `{_cell(result.label)}`: {finding}" for finding in result.lint]
    failing = [result for result in results if result.headline and (result.details or
               outcomes.get(result.label) == "failed")]  # fmt: skip
    if failing:
        lines += ["", "### Details", ""]
        size = sum(len(line) + 1 for line in lines)
        for position, result in enumerate(failing):
            block = _details(result)
            if size + len(block) > TOTAL_CHARS:
                left = len(failing) - position
                lines.append(
                    f"*{left} more tasks not shown: the report is capped at "
                    f"{TOTAL_CHARS // 1000} kB; see the pytest output.*"
                )
                break
            lines.append(block)
            size += len(block) + 1
    return "\n".join(lines) + "\n"


def _details(result: ItemResult) -> str:
    """One task's failure, collapsed."""
    body = result.details[:DETAILS_LINES]
    cut = len(result.details) - len(body)
    text = "\n".join(body)
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    note = f"\n\n*{cut} more lines cut; the pytest output has them all.*" if cut > 0 else ""
    return (
        f"<details><summary><code>{_html(result.label)}</code>: {_html(result.headline)}"
        f"</summary>\n\n{fence}diff\n{text}\n{fence}{note}\n\n</details>\n"
    )


def _longest_backtick_run(text: str) -> int:
    """The longest run of backticks in `text`: a code fence must be longer."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def write(path: Path | None, text: str) -> list[Path]:
    """Write the report to `path` and append it to `$GITHUB_STEP_SUMMARY`; the files written."""
    written: list[Path] = []
    if path is not None:
        write_atomic(path, text.encode("utf-8"))
        written.append(path)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as stream:
            stream.write(text)
        written.append(Path(summary))
    return written


def _cell(value: str) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def _html(value: str) -> str:
    """Text safe inside HTML."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
