"""`--evaltasks-report=PATH.html`: the run as one static page a reviewer can read in a browser.

The page holds the same findings as the Markdown report (`report.py`), laid out for reading
rather than for a comment box: a summary, the items by outcome with links to each, changes
grouped across tasks (one block per group, its members listed), side-by-side prompt diffs with
the changed characters highlighted, the lint findings and the broken modules.

It is one self-contained file: no script, no external asset, nothing fetched. Its policy
(`Content-Security-Policy: default-src 'none'`) forbids every script and every load, so task text
that looks like markup could do nothing even if it got through; and it does not, because every
piece of text is escaped where it is written (`_e`). Whitespace and hidden characters are made
visible in changed spans. Its size is bounded (`HTML_BYTES`): blocks past the bound are left out,
saying how many.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..snapshot.visible import CODE_POINT, changes, runs, visible
from .review import (
    Group,
    diff_lines,
    groups,
    headline,
    items_and_tasks,
    order,
    partition,
    segments,
)
from .summary import ItemResult, RunSummary, Selection, count

HTML_BYTES = 8_000_000
"""The page's size cap: a browser opens it at once, and a CI artifact stays small."""
NAV_ITEMS = 5_000
"""Items the navigation lists one by one; past that, by outcome counts only."""
MEMBER_NAMES = 2_000
"""Members a group's block lists by name."""

STYLE = """
:root { color-scheme: light; --del: #ffebe9; --ins: #dafbe1; --delx: #ff8182; --insx: #4ac26b; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: #1f2328; display: flex; }
nav { width: 280px; flex: none; height: 100vh; overflow: auto; position: sticky; top: 0;
      border-right: 1px solid #d0d7de; padding: 12px; background: #f6f8fa; font-size: 13px; }
nav ul { list-style: none; padding: 0; margin: 4px 0 12px; }
nav li { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
main { flex: 1; min-width: 0; padding: 16px 24px 64px; }
h1 { font-size: 20px; margin: 0 0 12px; }
h2 { font-size: 17px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; margin-top: 28px; }
h3 { font-size: 15px; margin: 0 0 6px; }
code, pre, .diff td { font-family: ui-monospace, Menlo, monospace; font-size: 12.5px; }
pre { background: #f6f8fa; padding: 8px; overflow: auto; white-space: pre-wrap; }
.block { border: 1px solid #d0d7de; border-radius: 6px; padding: 12px; margin: 12px 0; }
.block:target { outline: 3px solid #0969da; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 12px;
         background: #eaeef2; }
.failed .badge, .badge.failed { background: #ffebe9; color: #82071e; }
.badge.passed { background: #dafbe1; color: #116329; }
.members { columns: 3 260px; font-size: 13px; margin: 6px 0; padding-left: 18px; }
.members li:target { background: #fff8c5; }
.cut { color: #57606a; font-style: italic; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed; margin: 6px 0; }
.diff td { vertical-align: top; padding: 0 6px; white-space: pre-wrap; word-break: break-all; }
.diff td.old { background: var(--del); } .diff td.new { background: var(--ins); }
.diff td.same { background: #fff; color: #57606a; }
.diff tr.doc td { background: #ddf4ff; font-weight: 600; padding-top: 4px; }
.diff tr.hunk td { color: #8250df; background: #fbefff; }
.diff td.empty { background: #f6f8fa; }
.diff del { background: var(--delx); text-decoration: none; }
.diff ins { background: var(--insx); text-decoration: none; }
.ws { color: #6e7781; }
.cp { border: 1px solid currentColor; border-radius: 3px; font-size: 10.5px; padding: 0 2px; }
table.items { border-collapse: collapse; }
table.items td, table.items th { border: 1px solid #d0d7de; padding: 2px 8px; text-align: left; }
"""


def _e(value: object) -> str:
    """Text escaped for HTML content and quoted attributes: nothing breaks out of markup, and
    no hidden character (a direction override in a task name, a zero-width space) acts unseen:
    each is written as its code point (`visible`), line by line."""
    text = "\n".join(visible(line) for line in str(value).split("\n"))
    return html.escape(text, quote=True)


def anchor(label: str) -> str:
    """A stable id for an item: a digest of its label (labels hold any character)."""
    return "i-" + hashlib.sha256(label.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Page:
    """What the page is made of, sorted and grouped once."""

    results: list[ItemResult]
    outcomes: Mapping[str, str]
    failing: list[Group]
    reviewed: list[Group]

    @classmethod
    def of(cls, summary: RunSummary, outcomes: Mapping[str, str]) -> Page:
        """The run's results ordered and grouped as the Markdown report does."""
        results = sorted(summary.results, key=lambda result: order(result, outcomes))
        failing, reviewed, _ = partition(results, outcomes)
        return cls(results, outcomes, groups(failing), groups(reviewed))

    def shown(self) -> set[str]:
        """The labels of the items a block shows (alone, or as a member of its group)."""
        return {
            member.label for group in (*self.failing, *self.reviewed) for member in group.members
        }


def html_report(
    summary: RunSummary,
    outcomes: Mapping[str, str],
    selection: Selection | None = None,
    notes: Sequence[str] = (),
    limit: int = HTML_BYTES,
) -> str:
    """The page, within `limit` UTF-8 bytes."""
    selection = selection or Selection()
    page = Page.of(summary, outcomes)
    title = f"pytest-evaltasks: {count(len(page.results), 'item')} checked ({selection.mode} mode)"
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}</style></head>\n<body>\n"
    )
    summary_html = _summary(title, page, summary, selection, notes)
    nav = _nav(page)
    room = limit - _size(head) - _size(summary_html) - _size(nav) - 4_000
    sections, cut = _sections(page, room)
    body = [summary_html, *sections]
    if cut:
        body.append(
            f'<p class="cut" id="cut">Cut to fit {limit:,} bytes: {_e(cut)} not shown; the '
            f"pytest output and the Markdown report have them.</p>"
        )
    return head + nav + "<main>\n" + "\n".join(body) + "\n</main>\n</body></html>\n"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- summary and navigation ----------------------------------------------------------------


def _summary(
    title: str, page: Page, summary: RunSummary, selection: Selection, notes: Sequence[str]
) -> str:
    """The heading, why these items ran, the run's counts and what needs a person."""
    what = f"<code>{_e(selection.spec)}</code>" if selection.spec else "the node ids given"
    lines = [f"<li>{count(selection.tasks, 'task')} from {what} ({_e(selection.mode)} mode)</li>"]
    if selection.broken:
        lines.append(f"<li>{count(selection.broken, 'broken task module')}</li>")
    if selection.orphans:
        lines.append(f"<li>{count(selection.orphans, 'orphan snapshot')}</li>")
    if selection.changed is not None:
        lines.append(
            f"<li>changed only (<code>--evaltasks-changed</code>): {_e(selection.changed)}</li>"
        )
    if selection.base_ref is not None:
        lines.append(
            f"<li>also judged against the snapshots at <code>{_e(selection.base_ref)}</code> "
            f"(<code>--evaltasks-base</code>)</li>"
        )
    for line, colour in summary.lines():
        if line.startswith("  "):
            continue  # the bumps' labels: the navigation and the blocks have them
        if line.endswith(":"):
            line = f"{line[:-1]} (listed under Items)"
        lines.append(f"<li><strong>{_e(line)}</strong></li>" if colour else f"<li>{_e(line)}</li>")
    failing = sum(len(group.members) for group in page.failing)
    verdict = (
        f'<p class="badge failed">{count(failing, "item")} failed</p>'
        if failing
        else '<p class="badge passed">every item passed</p>'
    )
    warnings = "".join(f"<p><strong>Warning</strong>: {_e(note)}</p>" for note in notes)
    return (
        f'<section id="summary"><h1>{_e(title)}</h1>{verdict}{warnings}<ul>{"".join(lines)}</ul>'
        f"</section>"
    )


def _nav(page: Page) -> str:
    """Every item by outcome, each linked to where a block shows it (a grouped item to its
    entry in its group's list of members)."""
    shown = page.shown()
    buckets: dict[str, list[ItemResult]] = {}
    for result in page.results:
        outcome = page.outcomes.get(result.label, "?")
        buckets.setdefault(f"{outcome}: {result.outcome.value}", []).append(result)
    parts = ["<nav aria-label=\"items\"><strong>Items</strong>",
             "<p><a href=\"#summary\">Summary</a></p>"]  # fmt: skip
    listed = 0
    for name, members in buckets.items():
        parts.append(f"<div>{_e(name)} ({len(members):,})</div><ul>")
        for result in members:
            if listed >= NAV_ITEMS:
                break
            listed += 1
            label = _e(result.label)
            parts.append(
                f'<li><a href="#{anchor(result.label)}">{label}</a></li>'
                if result.label in shown
                else f"<li>{label}</li>"
            )
        parts.append("</ul>")
    if listed < len(page.results):
        parts.append(f'<p class="cut">{len(page.results) - listed:,} more items not listed</p>')
    parts.append("</nav>\n")
    return "\n".join(parts)


# --- the blocks ------------------------------------------------------------------------------


def _sections(page: Page, room: int) -> tuple[list[str], str]:
    """Failures, port changes, versioned changes, broken modules, lint findings, within `room`
    bytes; what
    was left out, as words ('' when nothing)."""
    sections: list[str] = []
    left_out: list[str] = []
    modules = [group for group in page.failing if group.first.kind == "module"]
    ports = [group for group in page.failing if group.first.kind == "port"]
    failures = [group for group in page.failing if group.first.kind not in ("module", "port")]
    titled = (
        ("failures", "Failures", failures),
        ("ports", "Port changes", ports),
        ("broken", "Broken task modules", modules),
        ("reviewed", "Versioned changes (passing)", page.reviewed),
    )
    for key, title, shown in titled:
        if not shown:
            continue
        blocks = [f'<section id="{key}"><h2>{_e(title)}</h2>']
        dropped = 0
        for group in shown:
            block = _block(group, page.outcomes)
            if _size(block) > room:
                dropped += len(group.members)
                continue
            room -= _size(block)
            blocks.append(block)
        if dropped:
            left_out.append(f"the blocks of {count(dropped, 'item')} in {title.lower()}")
            blocks.append(f'<p class="cut">{count(dropped, "more item")} not shown.</p>')
        sections.append("\n".join(blocks) + "</section>")
    lint = [
        f"<li><code>{_e(result.label)}</code>: {_e(finding)}</li>"
        for result in page.results
        for finding in result.lint
    ]
    if lint:
        shown_lint: list[str] = []
        for line in lint:
            if _size(line) > room:
                break
            room -= _size(line)
            shown_lint.append(line)
        if len(shown_lint) < len(lint):
            left_out.append(count(len(lint) - len(shown_lint), "lint finding"))
        sections.append(
            f'<section id="lint"><h2>Lint findings</h2><ul>{"".join(shown_lint)}</ul></section>'
        )
    return sections, ", ".join(left_out)


def _block(group: Group, outcomes: Mapping[str, str]) -> str:
    """One block: an item's failure or change, or a group's, with its members listed."""
    first = group.first
    outcome = outcomes.get(first.label, "?")
    css = "block failed" if outcome != "passed" else "block"
    if len(group.members) == 1:
        title = (
            f"<h3><code>{_e(first.label)}</code> "
            f'<span class="badge {_e(outcome)}">{_e(first.outcome.value)}</span></h3>'
        )
        members = ""
    else:
        how = "changed the same way" if diff_lines(first) else "failed the same way"
        labels = [member.label for member in group.members]
        title = (
            f"<h3>{_e(items_and_tasks(labels))} {how} "
            f'<span class="badge {_e(outcome)}">{_e(first.outcome.value)}</span></h3>'
        )
        names = "".join(
            f'<li id="{anchor(label)}"><code>{_e(label)}</code></li>'
            for label in labels[:MEMBER_NAMES]
        )
        more = (
            f'<li class="cut">… and {len(labels) - MEMBER_NAMES:,} more</li>'
            if len(labels) > MEMBER_NAMES
            else ""
        )
        members = (
            f'<ul class="members">{names}{more}</ul>'
            f"<p>Shown for <code>{_e(first.label)}</code>; the others make the same edits "
            f"(their doc ids, positions and other text may differ).</p>"
        )
    ident = f' id="{anchor(first.label)}"' if len(group.members) == 1 else ""
    return (
        f'<div class="{css}"{ident}>{title}{members}<p>{_e(headline(first))}</p>'
        f"{_body(first)}</div>"
    )


def _body(result: ItemResult) -> str:
    """The failure body: text as preformatted text, each diff side by side."""
    parts = []
    for kind, lines in segments(result.details):
        if not lines:
            continue
        if kind == "diff":
            parts.append(side_by_side(lines))
        else:
            parts.append(f"<pre>{_e(chr(10).join(lines))}</pre>")
    return "".join(parts)


# --- side-by-side diffs ---------------------------------------------------------------------


def side_by_side(lines: list[str]) -> str:
    """A unified diff (as `snapshot/failure.py` writes it, guide lines included) as a table:
    recorded on the left, current on the right; a removed line beside the added line that
    replaced it, the characters that differ highlighted."""
    rows = ["<table class=\"diff\"><colgroup><col><col></colgroup>",
            "<tr><th>recorded</th><th>current</th></tr>"]  # fmt: skip
    kept = (line for line in lines if not line.startswith("?"))
    for run in runs(kept):  # a terminal guide line: the highlighting says the same
        if not isinstance(run, str):
            removed, added = run
            for position in range(max(len(removed), len(added))):
                old = removed[position] if position < len(removed) else None
                new = added[position] if position < len(added) else None
                rows.append(_pair(old, new))
        elif run.startswith("@@"):
            rows.append(f'<tr class="hunk"><td colspan="2">{_e(run)}</td></tr>')
        elif run.startswith("[doc "):
            rows.append(f'<tr class="doc"><td colspan="2">{_e(run)}</td></tr>')
        elif run.startswith("..."):  # a cut, said once across both sides
            rows.append(f'<tr class="cut"><td colspan="2">{_e(run)}</td></tr>')
        else:
            text = _shown(run[1:] if run.startswith(" ") else run)
            rows.append(f'<tr><td class="same">{text}</td><td class="same">{text}</td></tr>')
    rows.append("</table>")
    return "\n".join(rows)


def _pair(old: str | None, new: str | None) -> str:
    """One row: both sides, the differing characters of a replaced line marked."""
    if old is None:
        return f'<tr><td class="empty"></td><td class="new">{_shown(new or "")}</td></tr>'
    if new is None:
        return f'<tr><td class="old">{_shown(old)}</td><td class="empty"></td></tr>'
    left: list[str] = []
    right: list[str] = []
    for tag, i1, i2, j1, j2 in changes(old, new):
        if tag == "equal":
            left.append(_shown(old[i1:i2]))
            right.append(_shown(new[j1:j2]))
            continue
        if i2 > i1:
            left.append(f"<del>{_shown(old[i1:i2], changed=True)}</del>")
        if j2 > j1:
            right.append(f"<ins>{_shown(new[j1:j2], changed=True)}</ins>")
    return f'<tr><td class="old">{"".join(left)}</td><td class="new">{"".join(right)}</td></tr>'


def _shown(text: str, changed: bool = False) -> str:
    """Escaped text; a code point written out (`⟨U+200B⟩`) boxed; in a changed span, each
    space a visible dot (a doubled space is then two dots, not a wider gap)."""
    out: list[str] = []
    position = 0
    for match in CODE_POINT.finditer(text):
        out.append(_spaces(_e(text[position : match.start()]), changed))
        out.append(f'<span class="cp">{_e(match.group()[1:-1])}</span>')
        position = match.end()
    out.append(_spaces(_e(text[position:]), changed))
    return "".join(out)


def _spaces(escaped: str, changed: bool) -> str:
    """In a changed span, spaces as `·` (styled apart from the text)."""
    return escaped.replace(" ", '<span class="ws">·</span>') if changed else escaped
