"""The version gate's decision table, and the readable failure report, without pytest."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_evaltasks.engine.rendered import Upstream
from pytest_evaltasks.snapshot.facts import FORMAT_VERSION, SnapshotFacts
from pytest_evaltasks.snapshot.failure import failure_report
from pytest_evaltasks.snapshot.gate import Outcome, judge, version_order

SETTINGS = {"system_prompt": "null", "chat_template": "null"}


def facts(
    hashes: dict[str, str],
    version: str = "0",
    settings: dict[str, str] | None = None,
    docs_shown: str = "3",
    **task: str,
) -> SnapshotFacts:
    fields = {"name": "t|0", "version": version, "metrics": "m", **task}
    return SnapshotFacts(
        FORMAT_VERSION, fields, {**SETTINGS, **(settings or {})}, {"docs_shown": docs_shown}, hashes
    )


@pytest.mark.parametrize("update", [False, True])
def test_changed_docs_under_the_same_version_are_refused(update: bool) -> None:
    verdict = judge(facts({"0": "a", "1": "b"}), facts({"0": "a", "1": "c"}), update)
    assert verdict.outcome is Outcome.UNVERSIONED
    assert not verdict.record and not verdict.passes
    assert verdict.docs.changed == ["1"]
    assert "1 of 2 docs changed (id 1)" in verdict.headline
    assert "its version is still 0" in verdict.headline
    assert ("the update is refused" in verdict.headline) is update


def test_a_versioned_change_is_a_diff_then_a_write() -> None:
    old, new = facts({"0": "a"}), facts({"0": "b"}, version="1")
    compare = judge(old, new, update=False)
    assert compare.outcome is Outcome.VERSIONED and not compare.passes
    assert "version 0 -> 1" in compare.headline
    update = judge(old, new, update=True)
    assert update.record and update.passes


def test_task_fields_are_content() -> None:
    verdict = judge(facts({"0": "a"}), facts({"0": "a"}, metrics="other"), update=True)
    assert verdict.outcome is Outcome.UNVERSIONED
    assert verdict.fields == ["metrics: m -> other"]


def test_unversioned_is_recorded_only_when_asked_and_only_in_update_mode() -> None:
    old, new = facts({"0": "a"}), facts({"0": "b"})
    allowed = judge(old, new, update=True, allow_unversioned=True)
    assert allowed.record and allowed.warnings
    assert not judge(old, new, update=False, allow_unversioned=True).passes


@pytest.mark.parametrize("update", [False, True])
def test_a_setting_never_masks_a_content_change(update: bool) -> None:
    old = facts({"0": "a", "1": "b"})
    new = facts({"0": "x", "1": "y"}, settings={"system_prompt": '"Be brief."'})
    verdict = judge(old, new, update)
    assert verdict.outcome is Outcome.UNVERSIONED and not verdict.record
    assert verdict.settings == ['system_prompt: null -> "Be brief."']
    assert "2 of 2 docs changed" in verdict.headline
    assert "run settings changed (system_prompt)" in verdict.headline


def test_a_settings_change_alone_is_named_as_such() -> None:
    old = facts({"0": "a"})
    new = facts({"0": "a"}, settings={"system_prompt": '"Be brief."'})
    compare = judge(old, new, update=False)
    assert compare.outcome is Outcome.SETTINGS and not compare.passes
    assert "content is unchanged" in compare.headline
    assert judge(old, new, update=True).record


def test_presentation_never_decides() -> None:
    verdict = judge(facts({"0": "a"}), facts({"0": "a"}, docs_shown="7"), update=False)
    assert verdict.outcome is Outcome.UNCHANGED and verdict.passes


@pytest.mark.parametrize("update", [False, True])
def test_a_partial_run_checks_the_docs_it_rendered_and_records_nothing(update: bool) -> None:
    old = facts({"0": "a", "1": "b", "2": "c"}, docs="3")
    same = judge(old, facts({"0": "a", "1": "b"}, docs="3"), update, partial=True)
    assert same.outcome is Outcome.UNCHANGED and same.passes and not same.record
    assert "2 of 3 docs checked" in same.headline
    changed = judge(old, facts({"0": "a", "1": "X"}, docs="3"), update, partial=True)
    assert not changed.passes and not changed.record
    if update:
        assert changed.outcome is Outcome.PARTIAL
        assert "cannot record a change" in changed.headline
    else:
        assert changed.outcome is Outcome.UNVERSIONED and changed.docs.changed == ["1"]
    versioned = judge(old, facts({"0": "X"}, version="1", docs="3"), update, partial=True)
    assert not versioned.record  # a partial run never records, even a versioned change
    new = judge(None, facts({"0": "a"}, docs="3"), update, partial=True)
    assert new.outcome is Outcome.PARTIAL and not new.record


@pytest.mark.parametrize("update", [False, True])
def test_versions_only_go_up(update: bool) -> None:
    verdict = judge(facts({"0": "a"}, version="3"), facts({"0": "b"}, version="2"), update)
    assert verdict.outcome is Outcome.UNVERSIONED and not verdict.record
    assert "version went down (3 -> 2); versions only go up" in verdict.headline
    alone = judge(facts({"0": "a"}, version="3"), facts({"0": "a"}, version="2"), update)
    assert not alone.record and not alone.passes


@pytest.mark.parametrize(
    ("old", "new", "order"),
    [
        ("0", "1", 1),
        ("1", "0", -1),
        ('"1.9"', '"1.10"', 1),
        ('"1.0"', "1", 0),
        ("2", '"2.1"', 1),
        ('"beta"', '"gamma"', None),
        ("1", "1", 0),
        ("1.0", "1", 0),
        ("1.0", "2.0", 1),
        ("1.5", '"1.10"', 1),
        ("true", "1", None),
    ],
)
def test_version_order(old: str, new: str, order: int | None) -> None:
    assert version_order(old, new) == order


def test_new_task_and_version_only_bump() -> None:
    current = facts({"0": "a"})
    bumped = judge(current, facts({"0": "a"}, version="1"), update=True)
    assert bumped.outcome is Outcome.VERSIONED and bumped.record and bumped.warnings
    assert judge(None, current, update=False).outcome is Outcome.NEW
    assert judge(current, facts({"0": "a"}), update=False).outcome is Outcome.UNCHANGED


def _text(label_lines: dict[str, list[str]]) -> str:
    blocks = [
        "\n".join([f"[doc {i + 1} of 9] id={label}", *lines, "--- end ---"])
        for i, (label, lines) in enumerate(label_lines.items())
    ]
    return "# header\n\n" + "\n\n".join(blocks) + "\n"


def test_failure_report_diffs_the_shown_docs_with_their_headers_and_summarises_hashes() -> None:
    old = facts({str(i): "a" for i in range(500)})
    new = facts({str(i): "b" for i in range(500)})
    verdict = judge(old, new, update=False)
    before = _text({"7": ["| Q: x", "| Answer:"], "8": ["| Q: y", "| Answer:"]})
    after = _text({"7": ["| Q: x", "| ANSWER:"], "8": ["| Q: y", "| ANSWER:"]})
    report = failure_report(verdict, before, after, lambda label: None)
    text = report.render()
    assert len(text.split("\n")) < 60
    assert "ANSWER" in text and "[doc 1 of 9] id=7" in text and "[doc 2 of 9] id=8" in text
    assert "500 of 500 docs changed (ids 0, 1, 2, 3, 4, ... (+495 more))" in text
    assert "doc hashes: 500 lines differ; not listed" in text
    assert " a\n" not in text  # no hash line is listed


def test_failure_report_shows_a_changed_doc_that_is_not_shown_in_full() -> None:
    verdict = judge(facts({"0": "a", "1": "b"}), facts({"0": "a", "1": "c"}), update=False)
    same = _text({"0": ["| Q: same"]})
    report = failure_report(verdict, same, same, lambda label: f"[doc 2 of 2] id={label}\n| NEW")
    text = report.render()
    assert "doc 1 is not among the docs shown in full" in text and "| NEW" in text


def test_failure_report_caps_a_long_diff() -> None:
    verdict = judge(facts({"0": "a"}), facts({"0": "b"}), update=False)
    before = _text({str(i): [f"| line {j}" for j in range(40)] for i in range(3)})
    after = _text({str(i): [f"| LINE {j}" for j in range(40)] for i in range(3)})
    text = failure_report(verdict, before, after, lambda label: None).render()
    assert len(text.split("\n")) < 60
    assert "diff cut here" in text


def test_full_file_diff_only_when_very_verbose() -> None:
    verdict = judge(facts({"0": "a"}), facts({"0": "b"}), update=False)
    quiet = failure_report(verdict, "x\n", "y\n", lambda label: None).render()
    loud = failure_report(verdict, "x\n", "y\n", lambda label: None, verbose=2).render()
    assert "whole snapshot file diff" not in quiet and "whole snapshot file diff" in loud


HARNESS = Upstream(name="harness-x", setting="harness_x", owned=True, config="YAML")


@pytest.mark.parametrize("update", [False, True])
def test_an_upgrade_of_the_harness_that_owns_a_task_is_named_not_refused(update: bool) -> None:
    """A task whose config is another harness's own file changed with that harness's version
    (recorded in `[settings]` under the key the harness names): the upgrade is named and an
    update records it; the user has no version of theirs to bump."""
    old = facts({"0": "a"}, settings={"harness_x": '"1.0"'})
    new = facts({"0": "b"}, settings={"harness_x": '"1.1"'})
    verdict = judge(old, new, update, upstream=HARNESS)
    assert verdict.outcome is Outcome.UPSTREAM
    assert verdict.record is update and verdict.passes is update
    assert "harness-x 1.0 → 1.1 changed these prompts" in verdict.headline
    assert ("its YAML is harness-x's own" in verdict.headline) is not update


def test_an_upgrade_does_not_excuse_a_change_to_a_config_the_user_owns() -> None:
    old = facts({"0": "a"}, settings={"harness_x": '"1.0"'})
    new = facts({"0": "b"}, settings={"harness_x": '"1.1"'})
    mine = dataclasses.replace(HARNESS, owned=False)
    verdict = judge(old, new, update=True, upstream=mine)
    assert verdict.outcome is Outcome.UNVERSIONED and not verdict.record
    assert "(harness-x 1.0 → 1.1 changed too, and may be the cause" in verdict.headline
    for upstream in (None, HARNESS):  # same harness version, or none named: a plain refusal
        same = facts({"0": "b"}, settings={"harness_x": '"1.0"'})
        plain = judge(old, same if upstream else new, update=True, upstream=upstream)
        assert plain.outcome is Outcome.UNVERSIONED and "changed too" not in plain.headline


def test_a_change_to_a_harness_owned_task_without_an_upgrade_advises_no_version_bump() -> None:
    """The user cannot bump a version in a config the harness owns: the advice is to reinstall
    or to copy the task into their own folder; a config of the user's keeps the bump."""
    old = facts({"0": "a"}, settings={"harness_x": '"1.0"'})
    new = facts({"0": "b"}, settings={"harness_x": '"1.0"'})
    owned = judge(old, new, update=False, upstream=HARNESS)
    assert owned.outcome is Outcome.UNVERSIONED
    assert "bump the task's `version`" not in owned.headline
    assert "its YAML is harness-x's own, with no version of yours to bump" in owned.headline
    assert "pip install --force-reinstall" in owned.headline
    assert "copy its YAML into your task folder under a new name" in owned.headline
    mine = judge(old, new, update=False, upstream=dataclasses.replace(HARNESS, owned=False))
    assert "bump the task's `version` in its config" in mine.headline


def test_a_removed_line_that_begins_with_dashes_stays_in_the_diff() -> None:
    """Only a unified diff's two file headers are dropped: a removed `--- end ---` line of a
    snapshot reads `---- end ---` and must be shown, not taken for a header."""
    verdict = judge(facts({"0": "a"}), facts({"0": "b"}), update=False)
    old, new = "[task]\n--- chat messages ---\nx\n", "[task]\nx\n"
    shown = failure_report(verdict, old, new, lambda label: None, verbose=2).render()
    assert "---- chat messages ---" in shown


def test_a_changed_object_beside_a_removed_one_is_explained_by_its_own_kind() -> None:
    """`metrics` loses one object and another changes: only the changed one is explained (its
    old and new outlines paired by kind), never the removed one against the changed one."""
    a, b_old, b_new = "a" * 16, "b" * 16, "c" * 16
    old = dataclasses.replace(
        facts({"0": "x"}, metrics=f"A [a] #{a}, B [b] #{b_old}"),
        identities=(f"#{a} m:A", "  limit: 1", f"#{b_old} m:B", "  limit: 2"),
    )
    new = dataclasses.replace(
        facts({"0": "x"}, metrics=f"B [b] #{b_new}"),
        identities=(f"#{b_new} m:B", "  limit: 3"),
    )
    (change,) = judge(old, new, False).fields
    assert change.split("\n")[1:] == ["  limit: 2 -> 3 (in m:B)"]
