"""The regression gate: a prompt that changed while the task's `version` stayed is refused.

Pure decision logic over two `SnapshotFacts` (recorded and current), so it can be tested and
explained without pytest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .format import FORMAT_VERSION, SnapshotFacts


class Outcome(Enum):
    """What the item should do with the snapshot."""

    NEW = "new"  # no snapshot yet: syrupy creates it (update) or reports it missing
    SAME = "same"  # nothing changed
    CHANGED = "changed"  # a versioned change: a reviewable diff (compare) or a write (update)
    REFUSED = "refused"  # unversioned content change, or settings mismatch in compare mode


@dataclass
class Verdict:
    """The gate's decision, with a message that says what changed and what to do."""

    outcome: Outcome
    headline: str = ""
    changed_docs: list[str] = field(default_factory=list)
    needs_version_bump: bool = False
    warnings: list[str] = field(default_factory=list)


def judge(
    old: SnapshotFacts | None,
    new: SnapshotFacts,
    task_name: str,
    update: bool,
    allow_unversioned: bool = False,
) -> Verdict:
    """Compare the recorded snapshot with this run's, in compare or update mode."""
    if old is None:
        return Verdict(Outcome.NEW, f"{task_name}: new task, no snapshot recorded yet")
    if old.format_version != FORMAT_VERSION:
        return _format_change(old, task_name, update)
    settings = _differences(old.settings, new.settings)
    if settings and not update:
        return Verdict(
            Outcome.REFUSED,
            f"{task_name}: this run's settings differ from the recorded ones "
            f"({'; '.join(settings)}). This is not a prompt change: rerun with the recorded "
            f"settings, or record the new ones with --snapshot-update.",
        )
    changed_docs = changed_doc_labels(old.doc_hashes, new.doc_hashes)
    content = _differences(old.content(), new.content())
    version_same = old.version == new.version
    # Header fields do not depend on run settings, so their change always needs a bump; doc
    # prompts do (a new system prompt changes every prompt), so only without a settings change.
    if (content or (changed_docs and not settings)) and version_same:
        return _unversioned(
            task_name, new.version, changed_docs, content, update, allow_unversioned
        )
    if not changed_docs and not content and not settings:
        if version_same:
            return Verdict(Outcome.SAME)
        return _version_only(task_name, old.version, new.version, update)
    what = _describe_change(changed_docs, content, settings)
    return Verdict(
        Outcome.CHANGED,
        f"{task_name}: {what}; version {old.version} -> {new.version}"
        + ("" if update else ". Review the diff, then record it with --snapshot-update."),
        changed_docs=changed_docs,
    )


def changed_doc_labels(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Labels of docs added, removed, or whose hash differs, in the new file's order."""
    changed = [label for label, digest in new.items() if old.get(label) != digest]
    changed += [label for label in old if label not in new]
    return changed


def _unversioned(
    task_name: str,
    version: str,
    changed_docs: list[str],
    content: list[str],
    update: bool,
    allow_unversioned: bool,
) -> Verdict:
    """Content changed under the same version: the gate's reason to exist."""
    what = _describe_change(changed_docs, content, [])
    if allow_unversioned and update:
        return Verdict(
            Outcome.CHANGED,
            f"{task_name}: {what} without a version bump (allowed by "
            f"--evaltasks-allow-unversioned)",
            changed_docs=changed_docs,
        )
    refusal = "the update is refused" if update else "the snapshot no longer matches"
    return Verdict(
        Outcome.REFUSED,
        f"{task_name}: {what}, but its version is still {version}; {refusal}. "
        f"Bump the task's `version` in its config, then run --snapshot-update "
        f"(or pass --evaltasks-allow-unversioned to record it anyway).",
        changed_docs=changed_docs,
        needs_version_bump=True,
    )


def _version_only(task_name: str, old: str, new: str, update: bool) -> Verdict:
    """A bumped version with identical prompts: recordable, but worth a warning."""
    message = f"{task_name}: version {old} -> {new} but no prompt or setting changed"
    return Verdict(
        Outcome.CHANGED,
        message + ("" if update else "; record it with --snapshot-update"),
        warnings=[message] if update else [],
    )


def _format_change(old: SnapshotFacts, task_name: str, update: bool) -> Verdict:
    """Our own file format moved on: never a prompt change."""
    headline = (
        f"{task_name}: snapshot written in format {old.format_version}, this "
        f"pytest-evaltasks writes format {FORMAT_VERSION}"
    )
    if update:
        return Verdict(Outcome.CHANGED, headline + "; rewriting it")
    return Verdict(
        Outcome.REFUSED,
        headline + ". This is not a prompt change: run --snapshot-update to rewrite it.",
    )


def _differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """`key: old -> new` for every field that differs."""
    keys = list(dict.fromkeys([*old, *new]))
    return [
        f"{key}: {old.get(key, '<absent>')} -> {new.get(key, '<absent>')}"
        for key in keys
        if old.get(key) != new.get(key)
    ]


def _describe_change(changed_docs: list[str], content: list[str], settings: list[str]) -> str:
    """A one-line summary: which docs, which header fields, which settings."""
    parts: list[str] = []
    if changed_docs:
        shown = ", ".join(changed_docs[:10]) + (", ..." if len(changed_docs) > 10 else "")
        parts.append(f"{len(changed_docs)} doc prompt(s) changed (ids {shown})")
    if content:
        parts.append("task fields changed (" + "; ".join(content) + ")")
    if settings:
        parts.append("settings changed (" + "; ".join(settings) + ")")
    return ", ".join(parts) or "nothing changed"
