"""`--evaltasks-report=PATH`: the run as Markdown, for a pull request and a job summary (a
path ending in `.html` gets the page of `report_html` instead; the job summary is Markdown).

It starts with why these items ran (the task string, `--evaltasks-changed`, `--evaltasks-base`)
and the run summary, then a table of every item (failures first: outcome, changed docs,
version before and after), the lint findings, and each failure in a collapsed `<details>`
block: its prompt diff in a `diff` fence, a broken module's import traceback, why a snapshot is
an orphan; then each passing change to review (versioned since `--evaltasks-base`). Tasks that
changed the same way (one template edit across 57 MMLU subjects) share one block: one diff and
the list of tasks.

The file stays within a pull-request comment (65,536 characters); what is appended to
`$GITHUB_STEP_SUMMARY` within GitHub's 1 MiB. Passing rows and lint lines are cut before
failure details, and every cut says what was cut. Both destinations are checked before the run
(`destinations`); a write that still fails is a warning in the terminal summary, never
an INTERNALERROR.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ..files import write_atomic
from .destinations import ENV, report_problems
from .results import ResultsError, merge, read
from .review import (
    Group,
    diff_lines,
    edits,
    groups,
    headline,
    items_and_tasks,
    order,
    partition,
    segments,
)
from .summary import ItemResult, RunSummary, Selection, count

REPORT_CHARS = 65_536
"""The report file's size cap: what one pull-request comment holds."""
SUMMARY_BYTES = 1_048_576
"""GitHub's cap on a job step's summary (UTF-8 bytes, whatever else the step appended)."""
DETAILS_LINES = 60
"""Lines of one failure shown in its `<details>` block."""
RESERVE = 2_000
"""Room kept for the table header, the section headings and the notes of what was cut."""
GIST_CHARS = 60
"""Characters of each side of a group's one-line gist."""


@dataclass(frozen=True)
class Budget:
    """A size cap, in characters or in UTF-8 bytes."""

    limit: int
    in_bytes: bool = False

    def size(self, text: str) -> int:
        """The size of `text` in this budget's unit."""
        return len(text.encode("utf-8")) if self.in_bytes else len(text)

    def describe(self) -> str:
        """`65,536 characters`."""
        return f"{self.limit:,} {'bytes' if self.in_bytes else 'characters'}"

    @property
    def names(self) -> int:
        """How many task names a group's list shows."""
        return max(10, self.limit // 400)

    @property
    def bumps(self) -> int:
        """How many task names the list of version bumps shows (the table has them too)."""
        return max(10, self.limit // 1000)


REPORT_BUDGET = Budget(REPORT_CHARS)


def markdown(
    summary: RunSummary,
    outcomes: Mapping[str, str],
    selection: Selection | None = None,
    budget: Budget = REPORT_BUDGET,
    notes: Sequence[str] = (),
) -> str:
    """The report, within `budget`. `outcomes` maps an item's label to pytest's outcome
    (passed, failed). `notes`: warnings shown under the heading (a merge of results files
    that are not one run's)."""
    selection = selection or Selection()
    results = sorted(summary.results, key=lambda result: order(result, outcomes))
    if not results:
        text = _nothing_ran(selection, notes)
    else:
        text = ""
        for reserve in (RESERVE, 4 * RESERVE, budget.limit // 2):
            text = _fitted(summary, results, outcomes, selection, budget, reserve, notes)
            if budget.size(text) <= budget.limit:
                return text
    return text if budget.size(text) <= budget.limit else _hard_cut(text, budget)


def _nothing_ran(selection: Selection, notes: Sequence[str] = ()) -> str:
    """No item reported: the selection, and why nothing was checked."""
    lines = [f"## pytest-evaltasks: nothing checked ({selection.mode} mode)", ""]
    lines += _note_lines(notes)
    lines += _selection_lines(replace(selection, changed=None))  # the sentence says it
    if selection.changed is not None:
        sentence = selection.changed
        if not sentence.rstrip().endswith("nothing to check"):
            sentence = f"{sentence}: nothing to check"
    else:
        sentence = "no evaltasks item ran: none was selected, or the run stopped before any"
    lines += ["", _text(_clip(sentence))]
    return "\n".join(lines) + "\n"


def _note_lines(notes: Sequence[str]) -> list[str]:
    """Each note as a quoted warning paragraph, and a blank line after them."""
    lines: list[str] = []
    for note in notes:
        lines += [*([">"] if lines else []), f"> **Warning**: {_text(_clip(note))}"]
    return [*lines, ""] if lines else []


def _selection_lines(selection: Selection) -> list[str]:
    """Why these items ran, as bullets."""
    what = _code(selection.spec) if selection.spec is not None else "the node ids given"
    extra = []
    if selection.broken:
        extra.append(count(selection.broken, "broken task module"))
    if selection.orphans:
        extra.append(count(selection.orphans, "orphan snapshot"))
    lines = [
        f"- {count(selection.tasks, 'task')} from {what}"
        + (f" and {', '.join(extra)}" if extra else "")
        + f" ({selection.mode} mode)"
    ]
    if selection.changed is not None:
        lines.append(f"- changed only (`--evaltasks-changed`): {_text(_clip(selection.changed))}")
    if selection.base_ref is not None:
        lines.append(
            f"- also judged against the snapshots at {_code(selection.base_ref)} "
            f"(`--evaltasks-base`): a prompt change since then needs a version bump"
        )
    return lines


def _summary_lines(summary: RunSummary, budget: Budget) -> list[str]:
    """The terminal's summary lines as bullets; the version bumps as one capped list."""
    lines: list[str] = []
    labels: list[str] = []
    for line, colour in summary.lines():
        if line.startswith("  "):
            labels.append(line.strip())
            continue
        lines.append(f"- **{_text(line)}**" if colour else f"- {_text(line)}")
    if labels and lines:
        lines[-1] += " " + _names(labels, budget.bumps)
    return lines


def _names(labels: list[str], cap: int) -> str:
    """`a`, `b`, ... and 3 more."""
    shown = ", ".join(_code(label) for label in labels[:cap])
    left = len(labels) - cap
    return f"{shown}, … and {left:,} more" if left > 0 else shown


@dataclass(frozen=True)
class _Block:
    """One `<details>` block and the number of items it covers."""

    text: str
    items: int


def _fitted(
    summary: RunSummary,
    results: list[ItemResult],
    outcomes: Mapping[str, str],
    selection: Selection,
    budget: Budget,
    reserve: int,
    notes: Sequence[str] = (),
) -> str:
    """The report with as much as fits in `budget` less `reserve`, taken in this order:
    failing rows (up to half the room), failure details, the other failing rows, the rows and
    details of passing changes to review (a versioned change since the base), the other rows
    (when all of that fit), then lint lines."""
    failing, reviewed, rest = partition(results, outcomes)
    failing_groups = groups(failing)
    reviewed_groups = groups(reviewed)
    failing_rows = [_group_row(group, outcomes) for group in failing_groups]
    reviewed_rows = [_group_row(group, outcomes) for group in reviewed_groups]
    rest_rows = [_row(result, outcomes) for result in rest]
    lint = [
        f"- {_code(result.label)}: {_text(finding)}"
        for result in results
        for finding in result.lint
    ]
    failed_blocks = _blocks(
        [g for g in failing_groups if g.first.headline and g.first.kind != "port"], budget
    )
    port_blocks = _blocks([g for g in failing_groups if g.first.kind == "port"], budget)
    reviewed_blocks = _blocks(reviewed_groups, budget)
    head = [
        f"## pytest-evaltasks: {count(len(results), 'item')} checked ({selection.mode} mode)",
        "",
        *_note_lines(notes),
        *_selection_lines(selection),
        *_summary_lines(summary, budget),
    ]
    room = _Room(budget.limit - budget.size("\n".join(head)) - reserve, budget)
    n_failing = room.take(failing_rows, cap=room.left // 2)
    n_failed_blocks = room.take([block.text for block in failed_blocks])
    n_port_blocks = room.take([block.text for block in port_blocks])
    n_failing += room.take(failing_rows[n_failing:])
    n_reviewed = room.take(reviewed_rows) if n_failing == len(failing_rows) else 0
    n_reviewed_blocks = room.take([block.text for block in reviewed_blocks])
    complete = (
        n_failing == len(failing_rows)
        and n_failed_blocks == len(failed_blocks)
        and n_port_blocks == len(port_blocks)
        and n_reviewed == len(reviewed_rows)
        and n_reviewed_blocks == len(reviewed_blocks)
    )
    n_rest = room.take(rest_rows) if complete else 0  # a few of them would tell nothing
    n_lint = room.take(lint)

    rows = [*failing_rows[:n_failing], *reviewed_rows[:n_reviewed], *rest_rows[:n_rest]]
    rows_left = len(failing_rows) + len(reviewed_rows) + len(rest_rows) - len(rows)
    failing_left = len(failing_rows) - n_failing
    failed_left = sum(block.items for block in failed_blocks[n_failed_blocks:])
    port_left = sum(block.items for block in port_blocks[n_port_blocks:])
    reviewed_left = sum(block.items for block in reviewed_blocks[n_reviewed_blocks:])
    cuts = []
    if rows_left:
        cuts.append(_count(rows_left, "table row"))
    if failed_left:
        cuts.append(f"the details of {_count(failed_left, 'failing item')}")
    if port_left:
        cuts.append(f"the details of {_count(port_left, 'port change')}")
    if reviewed_left:
        cuts.append(f"the details of {_count(reviewed_left, 'passing change')}")
    if n_lint < len(lint):
        cuts.append(_count(len(lint) - n_lint, "lint finding"))
    lines = head
    if cuts:
        lines += [
            "",
            f"> **Cut to fit {budget.describe()}**: {', '.join(cuts)} not shown. The pytest "
            f"output has them all.",
        ]
    lines += ["", "| task | result | outcome | changed docs | version |", "|---|---|---|---|---|"]
    lines += rows
    if rows_left:
        which = f" ({failing_left:,} of them failing)" if failing_left else ""
        lines += [
            "",
            f"*… {rows_left:,} more items not listed{which}; the pytest output has them all.*",
        ]
    if lint:
        lines += ["", "### Lint findings", "", *lint[:n_lint]]
        if n_lint < len(lint):
            lines += [
                "",
                f"*… {len(lint) - n_lint:,} more lint findings not listed; the pytest output "
                f"has them all.*",
            ]
    sections = (
        ("Failures", failed_blocks, n_failed_blocks, failed_left, "more failing item"),
        ("Port changes", port_blocks, n_port_blocks, port_left, "more port change"),
        ("Versioned changes (passing)", reviewed_blocks, n_reviewed_blocks, reviewed_left,
         "more passing change"),
    )  # fmt: skip
    for title, blocks, shown, left, noun in sections:
        if not blocks:
            continue
        lines += [*([""] if lines[-1] else []), f"### {title}", ""]
        for block in blocks[:shown]:
            lines += [block.text, ""]
        if left:
            lines += [
                f"*… the details of {_count(left, noun)} not shown; the pytest output has "
                f"them all.*",
                "",
            ]
    return "\n".join(lines).rstrip("\n") + "\n"


class _Room:
    """What is left of a budget, taken piece by piece (a piece and its newline)."""

    def __init__(self, left: int, budget: Budget) -> None:
        self.left = max(left, 0)
        self.budget = budget

    def take(self, pieces: list[str], cap: int | None = None) -> int:
        """How many of `pieces`, in order, fit (within `cap` of the room, when given)."""
        allowance = self.left if cap is None else min(cap, self.left)
        used = taken = 0
        for piece in pieces:
            size = self.budget.size(piece) + 2
            if used + size > allowance:
                break
            used += size
            taken += 1
        self.left -= used
        return taken


def _hard_cut(text: str, budget: Budget) -> str:
    """Last resort (a budget too small for even the summary): whole lines up to the cap."""
    note = f"\n\n*… cut to fit {budget.describe()}; the pytest output has it all.*\n"
    room = budget.limit - budget.size(note)
    kept: list[str] = []
    used = 0
    for line in text.split("\n"):
        size = budget.size(line) + 1
        if used + size > room:
            break
        kept.append(line)
        used += size
    return "\n".join(kept) + note


def _row(result: ItemResult, outcomes: Mapping[str, str]) -> str:
    """One table row."""
    before = result.version_before if result.version_before is not None else "-"
    after = result.version_after if result.version_after is not None else "-"
    written = " (written)" if result.written else " (deleted)" if result.deleted else ""
    return (
        f"| {_code(result.label, table=True)} | {_text(outcomes.get(result.label, '?'))} | "
        f"{_text(result.outcome.value + written)} | {result.changed_docs or ''} | "
        f"{_text(before)} → {_text(after)} |"
    )


# --- failure details -------------------------------------------------------------------------


def _group_row(group: Group, outcomes: Mapping[str, str]) -> str:
    """One table row for a group: its one item's row, or one row that stands for all its
    members (their block below lists them)."""
    if len(group.members) == 1:
        return _row(group.first, outcomes)
    labels = [member.label for member in group.members]
    versions = {(m.version_before, m.version_after) for m in group.members}
    before, after = next(iter(versions)) if len(versions) == 1 else ("various", "various")
    return (
        f"| {_code(group.first.label, table=True)} and {len(labels) - 1:,} more: "
        f"{_text(items_and_tasks(labels))} changed the same way (one block below) | "
        f"{_text(outcomes.get(group.first.label, '?'))} | {_text(group.first.outcome.value)} | "
        f"{sum(member.changed_docs for member in group.members):,} | "
        f"{_text(before if before is not None else '-')} → "
        f"{_text(after if after is not None else '-')} |"
    )


def _blocks(shown: list[Group], budget: Budget) -> list[_Block]:
    """One block per group: an item's failure, or tasks that failed the same way."""
    return [
        _Block(_details(group.first), 1)
        if len(group.members) == 1
        else _Block(_group(group.members, budget), len(group.members))
        for group in shown
    ]


def _details(result: ItemResult) -> str:
    """One item's failure, collapsed: its headline, then its body."""
    summary = f"<code>{_html(result.label)}</code>: {_html(headline(result))}"
    if not result.details:
        return f"<p>{summary}</p>"
    return f"<details><summary>{summary}</summary>\n\n{_body(result)}\n\n</details>"


def _group(members: list[ItemResult], budget: Budget) -> str:
    """Tasks that failed the same way: one heading, the list of tasks, one body."""
    first = members[0]
    outcome = _html(first.outcome.value)
    diff = diff_lines(first)
    how_many = items_and_tasks([member.label for member in members])
    if diff:
        summary = f"{how_many} changed the same way{_gist(diff)}: {outcome}"
        others = "the same edits; their doc ids, positions and other text may differ"
    else:
        summary = f"{how_many} failed the same way: {outcome}"
        others = "the same text but for their names"
    listed = _names([member.label for member in members], budget.names)
    return (
        f"<details><summary>{summary}</summary>\n\n"
        f"Tasks: {listed}\n\n"
        f"Shown for {_code(first.label)} (the others: {others}): {_text(headline(first))}\n\n"
        f"{_body(first)}\n\n</details>"
    )


def _body(result: ItemResult) -> str:
    """An item's failure body: diffs in `diff` fences (`+`/`-` at column 0), the rest (the
    fields that changed, a traceback, an orphan's reason) in `text` fences."""
    lines = result.details
    cut = 0
    if len(lines) > DETAILS_LINES:
        cut = len(lines) - DETAILS_LINES
        if result.kind == "module":  # a traceback names its exception last
            lines = [*lines[:1], f"... {cut} lines cut ...", *lines[-(DETAILS_LINES - 1) :]]
        else:
            lines = lines[:DETAILS_LINES]
    parts = [_fenced(kind, part) for kind, part in segments(lines) if part]
    if cut:
        parts.append(f"*{cut} more lines cut; the pytest output has them all.*")
    return "\n\n".join(parts)


def _fenced(kind: str, lines: list[str]) -> str:
    """Lines in a code fence longer than any run of backticks inside."""
    text = "\n".join(lines)
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{fence}{kind}\n{text}\n{fence}"


def _longest_backtick_run(text: str) -> int:
    """The longest run of backticks in `text`: a code fence or span must be longer."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _gist(diff: list[str]) -> str:
    """The first change of a diff in one line, as HTML: ` (<code>a</code> → <code>b</code>)`."""
    changes = edits(diff)
    if not changes:
        return ""
    first = changes[0]
    if first[0] == "~":
        return f" ({_html_code(first[1])} → {_html_code(first[2])})"
    verb = "removed" if first[0] == "-" else "added"
    return f" ({verb} {_html_code(first[1])})"


def _html_code(text: str) -> str:
    """A short fragment as inline HTML code; `nothing` when empty."""
    if not text:
        return "nothing"
    return f"<code>{_html(_clip(text, GIST_CHARS))}</code>"


# --- escaping --------------------------------------------------------------------------------

_MARKDOWN = str.maketrans({char: "\\" + char for char in "\\`*_[]|~"})


def _one_line(value: object) -> str:
    """`value` as text on one line."""
    return " ".join(str(value).splitlines())


def _text(value: object) -> str:
    """Text safe in Markdown, a table cell included: no markup, no HTML, one line."""
    text = _one_line(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.translate(_MARKDOWN)


def _code(value: object, table: bool = False) -> str:
    """`value` as an inline code span (in a table cell with `table`, its pipes escaped)."""
    text = _one_line(value)
    if not text.strip():
        return "` `"
    ticks = "`" * (_longest_backtick_run(text) + 1)
    if text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " "):
        text = f" {text} "
    if table:
        text = text.replace("|", "\\|")
    return f"{ticks}{text}{ticks}"


def _html(value: object) -> str:
    """Text safe inside HTML, on one line."""
    return _one_line(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _count(number: int, noun: str) -> str:
    """`1 task`, `7,912 tasks`."""
    return f"{number:,} {noun}{'' if number == 1 else 's'}"


def _clip(text: str, limit: int = 2_000) -> str:
    """`text` cut to `limit` characters, saying so."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more)"


def publish(
    path: Path | None,
    summary: RunSummary,
    outcomes: Mapping[str, str],
    selection: Selection,
    environ: Mapping[str, str] = os.environ,
    notes: Sequence[str] = (),
) -> list[str]:
    """Write the report to `path` and append it to `$GITHUB_STEP_SUMMARY` (each within its
    budget); what went wrong, as lines for the terminal (never an exception)."""
    problems = []
    if path is not None:
        try:
            if is_html(path):
                from .report_html import html_report

                text = html_report(summary, outcomes, selection, notes=notes)
            else:
                text = markdown(summary, outcomes, selection, notes=notes)
            write_atomic(path, text.encode("utf-8"))
        except OSError as exc:
            problems.append(f"the report was not written: {exc}")
    value = environ.get(ENV, "")
    if not value:
        return problems
    target = Path(value)
    if path is not None and not is_html(path) and _same_file(path, target):
        return problems  # written above already
    try:
        held = target.stat().st_size if target.exists() else 0
        separator = "\n" if held else ""
        budget = Budget(SUMMARY_BYTES - held - len(separator), in_bytes=True)
        if budget.limit < 2 * RESERVE:
            problems.append(
                f"the report was not appended to {ENV}: it already holds {held:,} bytes of "
                f"GitHub's {SUMMARY_BYTES:,}"
            )
            return problems
        text = separator + markdown(summary, outcomes, selection, budget, notes)
        with open(target, "ab") as stream:
            stream.write(text.encode("utf-8"))
    except OSError as exc:
        problems.append(f"the report was not appended to {ENV}={value}: {exc}")
    return problems


def is_html(path: Path) -> bool:
    """Whether the report at `path` is the HTML page (its extension picks the format)."""
    return path.suffix.lower() in (".html", ".htm")


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.resolve() == other.resolve()
    except OSError:
        return False


def show_problems(
    config: pytest.Config, problems: list[str], name: str = "evaltasks-report-problems"
) -> None:
    """Say in the terminal summary (after the evaltasks section) what could not be written;
    `name`: the plugin that says it (the summary's "written" line looks for it)."""
    if config.pluginmanager.get_plugin("terminalreporter") is None:
        for problem in problems:
            sys.stderr.write(f"evaltasks: error: {problem}\n")
        return
    config.pluginmanager.register(_ProblemLines(problems), name)


class _ProblemLines:
    """A plugin that prints the report's write problems at the end of the terminal summary."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems

    @pytest.hookimpl(trylast=True)
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        """One red line per problem."""
        for problem in self.problems:
            terminalreporter.line(f"evaltasks: error: {problem}", red=True)


# --- the command -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] = os.environ) -> int:
    """`python -m pytest_evaltasks.plugin.report merge FILE... [--output PATH]`."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_evaltasks.plugin.report",
        description="Build the --evaltasks-report Markdown of several runs' --evaltasks-results "
        "files (the shards of one run) and append it to $GITHUB_STEP_SUMMARY.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="merge")
    command = commands.add_parser(
        "merge",
        help="merge results files into one report",
        description="Merge --evaltasks-results files into the report one run of all their items "
        "writes. Exit 0: merged, every item passed; 1: an item failed, the files are not the "
        "shards of one run (said in the report), or a write failed; 2: a usage error or a file "
        "that is not a results file (nothing written).",
    )
    command.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="results files, or folders whose *.json files are results files",
    )
    command.add_argument(
        "--output",
        "-o",
        metavar="PATH",
        help="write the report to PATH (without it and without $GITHUB_STEP_SUMMARY: stdout)",
    )
    arguments = parser.parse_args(argv)
    output = Path(arguments.output) if arguments.output else None
    try:
        paths = _expand(arguments.files)
        runs = [read(path, source) for path, source in paths]
    except ResultsError as exc:
        return _error(str(exc), 2)
    unwritable = report_problems(output, environ, option="--output")
    if unwritable:
        return _error("\n".join(unwritable), 2)
    merged = merge(runs)
    notes = merged.problems
    for problem in notes:
        sys.stderr.write(f"evaltasks merge: {problem}\n")
    if output is None and not environ.get("GITHUB_STEP_SUMMARY"):
        sys.stdout.write(markdown(merged.summary, merged.outcomes, merged.selection, notes=notes))
        written = []
    else:
        written = publish(
            output, merged.summary, merged.outcomes, merged.selection, environ, notes=notes
        )
    for problem in written:
        sys.stderr.write(f"evaltasks merge: error: {problem}\n")
    items = len(merged.summary.results)
    failed = f", {merged.failed:,} failed" if merged.failed else ""
    where = f"; report written to {output}" if output is not None and not written else ""
    sys.stderr.write(
        f"evaltasks merge: {count(len(runs), 'results file')}, {count(items, 'item')}"
        f"{failed}{where}\n"
    )
    return 1 if notes or written or merged.failed else 0


def _expand(arguments: Sequence[str]) -> list[tuple[Path, str]]:
    """Each argument's file, or a folder's `*.json` files (sorted); `ResultsError` for an
    argument that names nothing, or a folder without one."""
    found: list[tuple[Path, str]] = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            inside = sorted(path.glob("*.json"))
            if not inside:
                raise ResultsError(f"{argument}: a folder without a *.json results file")
            found += [(file, str(file)) for file in inside]
        elif not path.exists():
            raise ResultsError(
                f"{argument}: no such file (an unmatched shell pattern stays as written: did "
                f"the shards upload their files?)"
            )
        else:
            found.append((path, argument))
    return found


def _error(message: str, code: int) -> int:
    for line in message.splitlines():
        sys.stderr.write(f"evaltasks merge: error: {line}\n")
    return code


if __name__ == "__main__":  # `python -m pytest_evaltasks.plugin.report merge FILE...`
    sys.exit(main())
