"""The HTML report's pure parts: side-by-side diffs, escaping, grouping, its size bound."""

from __future__ import annotations

from pytest_evaltasks.plugin.report_html import html_report, side_by_side
from pytest_evaltasks.plugin.summary import ItemResult, RunSummary, Selection
from pytest_evaltasks.snapshot.gate import Outcome


def _failure(label: str, old: str, new: str) -> ItemResult:
    return ItemResult(
        label=label,
        outcome=Outcome.UNVERSIONED,
        docs=3,
        changed_docs=1,
        version_before="0",
        version_after="0",
        headline=f"{label}: 1 of 3 docs changed",
        details=[
            "prompt diff of the docs shown in full (recorded -> current):",
            "  [doc 1 of 3] id=0",
            "  @@ -1,2 +1,2 @@",
            f"  -| {old}",
            f"  +| {new}",
            "   | A:",
        ],
    )


def test_a_replaced_line_stands_beside_its_replacement_with_the_change_marked() -> None:
    table = side_by_side(["[doc 1 of 2] id=7", "@@ -1 +1 @@", "-| a <b>", "+| a  <b>", "?   ^"])
    assert '<tr class="doc"><td colspan="2">[doc 1 of 2] id=7</td></tr>' in table
    row = next(line for line in table.split("\n") if "<ins>" in line)
    assert row == (
        '<tr><td class="old">| a &lt;b&gt;</td>'
        '<td class="new">| a <ins><span class="ws">·</span></ins>&lt;b&gt;</td></tr>'
    )
    assert "?" not in table.replace("?</", "")  # the terminal's guide line is not shown


def test_a_cut_note_spans_both_sides() -> None:
    note = "... diff cut here: more changes in ids 4, 5"
    table = side_by_side(["-| a", "+| b", note])
    assert f'<tr class="cut"><td colspan="2">{note}</td></tr>' in table


def test_lines_only_removed_or_added_face_an_empty_cell() -> None:
    table = side_by_side(["-| gone", " | kept", "+| new"])
    assert '<td class="old">| gone</td><td class="empty"></td>' in table
    assert '<td class="empty"></td><td class="new">| new</td>' in table
    assert '<td class="same">| kept</td><td class="same">| kept</td>' in table


def test_tasks_that_changed_the_same_way_share_one_block_that_lists_items_and_tasks() -> None:
    results = [
        _failure(f"mmlu:{subject}|{shots}", f"Q {subject}. Answer:", f"Q {subject}. ANSWER:")
        for subject in ("anatomy", "virology")
        for shots in (0, 5)
    ]
    page = html_report(RunSummary(results), {r.label: "failed" for r in results}, Selection())
    assert page.count('class="block failed"') == 1
    assert "4 items of 2 tasks changed the same way" in page
    for result in results:
        assert f"<code>{result.label}</code>" in page


def test_the_page_is_bounded_and_says_what_it_left_out() -> None:
    results = [
        _failure(f"task_{n}|0", f"old text {n} " + "x" * 400, f"new words {n} " + "y" * 400)
        for n in range(3_000)
    ]
    outcomes = {result.label: "failed" for result in results}
    limit = 400_000
    page = html_report(RunSummary(results), outcomes, Selection(), limit=limit)
    assert len(page.encode("utf-8")) <= limit
    assert "Cut to fit 400,000 bytes: the blocks of" in page
    assert page.rstrip().endswith("</html>")


def test_hidden_characters_in_names_and_text_are_written_out() -> None:
    """A direction override in a task name would reorder what a reviewer reads."""
    spoof = _failure("task\u202e5|gnikcehc|0", "a", "b")
    page = html_report(RunSummary([spoof]), {spoof.label: "failed"}, Selection())
    assert "\u202e" not in page
    assert "task⟨U+202E⟩5|gnikcehc|0" in page
