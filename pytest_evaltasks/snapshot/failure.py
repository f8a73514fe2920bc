"""A failed snapshot check, written for a reviewer: short at any task size.

One headline, then what changed in the header, how many docs changed and which, and the prompt
text that changed, as a unified diff of the docs shown in full. Doc hashes are summarised, never
listed: on a task of thousands of docs they would bury the one line that matters. Every diff
line is made visible (`visible.marked_diff`): hidden characters as their code points, and a
guide line under each replaced line pointing at the characters that changed. The whole-file
diff is there for those who ask (`-vv`), and is never the advice: a reviewer of a pull request
reads the snapshot file's own diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from .gate import DocChanges, Outcome, Verdict, ids
from .parse import shown_blocks
from .visible import marked_diff, visible

DIFF_BUDGET = 36
"""Diff lines shown per task (the rest is counted); keeps a failure under 60 lines."""

NEW_TEXT_BUDGET = 30
"""Lines of a changed doc's new prompt shown when no doc shown in full changed."""

LINE_LIMIT = 400
"""Characters of one line of a report; longer lines are cut, saying how much."""

TOTAL_LIMIT = 64_000
"""Characters of one report; the rest is cut, saying how much."""


def bounded(line: str, limit: int = LINE_LIMIT) -> str:
    """`line` cut to `limit` characters, with a note of what was cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}... ({len(line) - limit} more characters cut)"


def bounded_lines(lines: list[str], total: int = TOTAL_LIMIT) -> list[str]:
    """Every line bounded, and at most `total` characters in all, with a note of the cut."""
    kept: list[str] = []
    size = 0
    for position, line in enumerate(lines):
        line = bounded(line)
        if size + len(line) > total:
            kept.append(f"... {len(lines) - position} more lines cut (the report is capped)")
            break
        kept.append(line)
        size += len(line) + 1
    return kept


@dataclass(frozen=True)
class FailureReport:
    """The text pytest shows for one failed task: a headline and its body."""

    headline: str
    body: list[str]

    def __post_init__(self) -> None:
        """However large the task or its prompts, a report stays readable: bounded lines, and
        a bounded total."""
        object.__setattr__(self, "headline", bounded(self.headline, 4 * LINE_LIMIT))
        object.__setattr__(self, "body", bounded_lines(self.body))

    def render(self) -> str:
        """Headline and body as one text."""
        return "\n".join([self.headline, *self.body])


def failure_report(
    verdict: Verdict,
    old_text: str | None,
    new_text: str,
    block_of: Callable[[str], str | None],
    verbose: int = 0,
) -> FailureReport:
    """Explain `verdict` with the recorded and current texts (laid out alike).

    `block_of(label)` lays out one current doc in full, for a changed doc that no snapshot
    shows in full.
    """
    body: list[str] = []
    if verdict.fields:
        body.append("task fields changed:")
        body += [f"  {visible(line)}" for change in verdict.fields for line in change.split("\n")]
    if verdict.settings:
        body.append("run settings changed:")
        body += [f"  {visible(change)}" for change in verdict.settings]
    docs = verdict.docs
    if docs.all:
        body.append(f"docs: {docs.describe()}")
    if verdict.outcome is Outcome.FORMAT:
        return FailureReport(verdict.headline, body)  # the two formats do not diff usefully
    if old_text is None:
        body += _new_text(new_text)
    else:
        body += _prompt_diff(old_text, new_text, docs, block_of)
    if docs.all:
        body.append(
            f"doc hashes: {len(docs.all)} lines differ; not listed here (the snapshot file's "
            f"diff lists them)"
        )
    if verbose >= 2 and old_text is not None:
        body.append("whole snapshot file diff (recorded -> current):")
        body += _unified(old_text.split("\n"), new_text.split("\n"), context=3)
    return FailureReport(verdict.headline, body)


def _prompt_diff(
    old_text: str, new_text: str, docs: DocChanges, block_of: Callable[[str], str | None]
) -> list[str]:
    """The docs shown in full whose text differs, as one budgeted unified diff."""
    before, after = shown_blocks(old_text), shown_blocks(new_text)
    differing = [
        label for label in dict.fromkeys([*after, *before]) if before.get(label) != after.get(label)
    ]
    if not differing:
        return _unshown_change(docs, block_of)
    lines = ["prompt diff of the docs shown in full (recorded -> current):"]
    budget = DIFF_BUDGET
    cut: list[str] = []
    for label in differing:
        hunk = _doc_diff(before.get(label, []), after.get(label, []))
        if budget <= 0:
            cut.append(label)
            continue
        lines += hunk[:budget]
        if len(hunk) > budget:
            cut.append(label)
        budget -= len(hunk)
    if cut:
        lines.append(
            f"  ... diff cut here: more changes in {ids(cut)} (the snapshot file's diff after "
            f"--snapshot-update shows them all)"
        )
    return lines


def _doc_diff(old: list[str], new: list[str]) -> list[str]:
    """One doc's diff, headed by its `[doc N of M] id=X` line so a hunk names its doc."""
    header = (new or old)[0]
    hunks = _unified(old[1:], new[1:], context=1)
    if old and new and old[0] != new[0]:
        hunks = [f"  - {old[0]}", f"  + {new[0]}", *hunks]
    return [f"  {header}", *hunks]


def _unified(old: list[str], new: list[str], context: int) -> list[str]:
    """A unified diff without its two file headers, made visible, indented. (The headers are
    its first two lines; a removed line that begins `---`, such as `--- end ---`, is kept.)"""
    lines = list(difflib.unified_diff(old, new, lineterm="", n=context))[2:]
    return [f"  {line}" for line in marked_diff(lines)]


def _unshown_change(docs: DocChanges, block_of: Callable[[str], str | None]) -> list[str]:
    """No doc shown in full changed: show the first changed doc's current prompt."""
    for label in docs.changed or docs.added:
        block = block_of(label)
        if block is None:
            continue
        lines = block.split("\n")
        shown = [
            f"doc {label} is not among the docs shown in full; its current text "
            f"(new text, nothing recorded to diff against):",
            *(f"  {visible(line)}" for line in lines[:NEW_TEXT_BUDGET]),
        ]
        if len(lines) > NEW_TEXT_BUDGET:
            shown.append(f"  ... {len(lines) - NEW_TEXT_BUDGET} more lines")
        return shown
    return []


def _new_text(new_text: str) -> list[str]:
    """A new snapshot: its first doc shown in full, for review."""
    blocks = list(shown_blocks(new_text).values())
    if not blocks:
        return []
    first = blocks[0]
    lines = ["the first doc, as it would be recorded:", *(f"  {visible(line)}" for line in first)]
    if len(lines) > NEW_TEXT_BUDGET:
        lines = [*lines[:NEW_TEXT_BUDGET], f"  ... {len(lines) - NEW_TEXT_BUDGET} more lines"]
    return lines
