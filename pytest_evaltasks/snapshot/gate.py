"""The regression gate: content that changed while the task's `version` did not go up is refused.

A pure decision over two `SnapshotFacts` (recorded and current), so it can be tested and
explained without pytest. Content (the `[task]` fields and the doc hashes) is always compared,
whatever the run settings: a changed setting is named as such, and never masks a content change.
Presentation (`[layout]`) never decides anything.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from . import outline
from .facts import SnapshotFacts

if TYPE_CHECKING:
    from ..engine.rendered import Upstream

IDS_IN_HEADLINE = 5


class Outcome(StrEnum):
    """What a task item found; one per item, so every item counts in exactly one bucket."""

    UNCHANGED = "unchanged"
    VERSIONED = "changed and versioned"
    UNVERSIONED = "changed without a version bump"
    SETTINGS = "run settings changed"
    FORMAT = "snapshot format changed"
    """An older format whose content was verified unchanged: rewritten by an update."""
    PARTIAL = "partial run cannot record"
    NONDETERMINISTIC = "nondeterministic"
    BASE = "changed since the base without a version bump"
    REVIEWED = "changed since the base, versioned"
    """Recorded in the working copy, and changed since the base under a greater version."""
    DELETED = "snapshot deleted since the base"
    UNREADABLE = "snapshot file unreadable"
    UPSTREAM = "changed by an upstream upgrade"
    """Content of a task whose config is another harness's own changed with that harness's
    version: named as the upgrade, recorded by an update (its user cannot bump a version they
    do not own)."""
    INPUTS = "inputs changed"
    """Content unchanged, but the files the task reads are not those recorded (a helper moved):
    a changed-only run selects by the recorded list, so it must be current."""
    EDITED = "snapshot text edited"
    """Content matches, but the file's text is not what this run lays out (a hand edit)."""
    PORT = "port differences changed"
    """What differs between the two sides of a port changed (`port_record`)."""
    NEW = "new"
    ORPHAN = "orphan"
    ERROR = "error"


@dataclass(frozen=True)
class DocChanges:
    """Doc labels whose hash differs, that are new, or that are gone."""

    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    compared: int = 0
    """Docs compared: all of them, or those both sides rendered when `max_samples` differs."""

    @property
    def all(self) -> list[str]:
        """Every label that differs, changed first."""
        return [*self.changed, *self.added, *self.removed]

    def describe(self) -> str:
        """`3 of 135 docs changed (ids 4, 7, 9)`, plus added and removed counts."""
        parts: list[str] = []
        if self.changed:
            parts.append(
                f"{len(self.changed)} of {self.compared} docs changed ({ids(self.changed)})"
            )
        if self.added:
            parts.append(f"{len(self.added)} docs added ({ids(self.added)})")
        if self.removed:
            parts.append(f"{len(self.removed)} docs removed ({ids(self.removed)})")
        return ", ".join(parts)


@dataclass(frozen=True)
class Verdict:
    """The gate's decision, with what changed and a headline that says what to do."""

    outcome: Outcome
    headline: str
    record: bool = False
    """Update mode: write this run's snapshot."""
    passes: bool = False
    """The item passes (after the write, when `record`)."""
    docs: DocChanges = field(default_factory=DocChanges)
    fields: list[str] = field(default_factory=list)
    """`[task]` fields that changed, as `key: old -> new`."""
    settings: list[str] = field(default_factory=list)
    """Run settings that changed, as `key: old -> new`."""
    warnings: list[str] = field(default_factory=list)

    @property
    def content_changed(self) -> bool:
        """A doc or a `[task]` field differs."""
        return bool(self.fields or self.docs.all)


def judge(
    old: SnapshotFacts | None,
    new: SnapshotFacts,
    update: bool,
    allow_unversioned: bool = False,
    partial: bool = False,
    upstream: Upstream | None = None,
) -> Verdict:
    """Compare a recorded snapshot with this run's (in the recorded one's format), in compare
    or update mode. `partial`: this run rendered only some docs (`--evaltasks-max-samples`);
    those are checked against their recorded hashes, and nothing can be recorded. `upstream`:
    the harness whose own release defines the task's config, when it is another harness's."""
    label = new.label
    if old is None:
        if partial:
            return _partial_refusal(new, "a new snapshot")
        advice = (
            "recording it" if update else "review it below, then record it with --snapshot-update"
        )
        return Verdict(
            Outcome.NEW, f"{label}: new task, no snapshot recorded yet; {advice}", update, update
        )
    fields = field_changes(old, new)
    same_format = old.format_version == new.format_version
    settings = differences(old.settings, new.settings) if same_format else []
    docs = compare_docs(old, new, partial)
    order = version_order(old.version, new.version)
    if (fields or docs.all or order != 0) and partial and update:
        return _partial_refusal(new, "a change")
    if order == 1:
        return _versioned(old, new, fields, settings, docs, update)
    if order == 0 and (fields or docs.all) and upstream_change(old, new, upstream):
        assert upstream is not None
        return _upstream(old, new, fields, settings, docs, update, upstream)
    if fields or docs.all or order != 0:
        return _refused(
            old, new, fields, settings, docs, order, update, allow_unversioned, upstream
        )
    if settings:
        if partial and update:
            return _partial_refusal(new, "new run settings")
        advice = (
            "recording them"
            if update
            else "rerun with the recorded settings, or record the new ones with --snapshot-update"
        )
        return Verdict(
            Outcome.SETTINGS,
            f"{label}: run settings differ from the recorded ones ({_keys(settings)}); the task's "
            f"content is unchanged; {advice}",
            update,
            update,
            docs,
            fields,
            settings,
        )
    checked = f" ({docs.compared} of {old.num_docs} docs checked)" if partial else ""
    return Verdict(Outcome.UNCHANGED, f"{label}: unchanged{checked}", False, True, docs)


def _partial_refusal(new: SnapshotFacts, what: str) -> Verdict:
    """A run over some docs cannot record: the docs it did not render were never verified."""
    return Verdict(
        Outcome.PARTIAL,
        f"{new.label}: --evaltasks-max-samples rendered {new.num_docs} of {new.total_docs} docs, "
        f"so it cannot record {what}: the other docs were not verified; run without "
        f"--evaltasks-max-samples to record it",
    )


def _versioned(
    old: SnapshotFacts,
    new: SnapshotFacts,
    fields: list[str],
    settings: list[str],
    docs: DocChanges,
    update: bool,
) -> Verdict:
    """A change under a greater version: a diff to review, then to record."""
    what = describe_change(docs, fields, settings) or "no prompt, field or setting changed"
    headline = f"{new.label}: {what}; version {old.version} -> {new.version}"
    warnings = (
        [f"version {old.version} -> {new.version} but no content changed"]
        if (not docs.all and not fields and update)
        else []
    )
    return Verdict(
        Outcome.VERSIONED,
        headline + ("" if update else "; review the diff, then record it with --snapshot-update"),
        update,
        update,
        docs,
        fields,
        settings,
        warnings,
    )


def upgrade(
    old: SnapshotFacts, new: SnapshotFacts, upstream: Upstream | None
) -> tuple[str, str] | None:
    """The harness's versions (before, after) when the two records were made under different
    ones (each records it in `[settings]`, under the key the harness names); None otherwise."""
    if upstream is None:
        return None
    before, after = old.settings.get(upstream.setting), new.settings.get(upstream.setting)
    if before is None or after is None or before == after:
        return None
    return _unquoted(before), _unquoted(after)


def upstream_change(old: SnapshotFacts, new: SnapshotFacts, upstream: Upstream | None) -> bool:
    """The change came with an upgrade of the harness, and the task's config is one of its
    own files (which its user does not own)."""
    return upstream is not None and upstream.owned and upgrade(old, new, upstream) is not None


def _unquoted(value: str) -> str:
    try:
        loaded = json.loads(value)
    except ValueError:
        return value
    return loaded if isinstance(loaded, str) else value


def _upstream(
    old: SnapshotFacts,
    new: SnapshotFacts,
    fields: list[str],
    settings: list[str],
    docs: DocChanges,
    update: bool,
    upstream: Upstream,
) -> Verdict:
    """An upgrade of the harness changed the prompts of one of its own tasks: named as the
    upgrade, never as a missing bump (the config is the harness's); an update records it."""
    before, after = upgrade(old, new, upstream) or ("?", "?")
    name = upstream.name
    what = describe_change(docs, fields, []) or "no content changed"
    advice = (
        "recording it"
        if update
        else f"review the diff, then record it with --snapshot-update (its {upstream.config} is "
        f"{name}'s own: there is no version of yours to bump)"
    )
    warning = f"{name} {before} → {after} changed the prompts of {name}'s own task"
    return Verdict(
        Outcome.UPSTREAM,
        f"{new.label}: {name} {before} → {after} changed these prompts ({what}); {advice}",
        update,
        update,
        docs,
        fields,
        settings,
        [warning] if update else [],
    )


def _refused(
    old: SnapshotFacts,
    new: SnapshotFacts,
    fields: list[str],
    settings: list[str],
    docs: DocChanges,
    order: int | None,
    update: bool,
    allow_unversioned: bool,
    upstream: Upstream | None,
) -> Verdict:
    """Content changed without the version going up: the gate's reason to exist."""
    what = describe_change(docs, fields, settings) or "no content changed"
    if order == 0:
        why = f"its version is still {new.version}"
        fix = "bump the task's `version` in its config, then run --snapshot-update"
        if upstream is not None and upstream.owned:
            fix = owned_fix(upstream)
        versions = upgrade(old, new, upstream)
        if versions is not None and upstream is not None:
            why += (
                f" ({upstream.name} {versions[0]} → {versions[1]} changed too, and may be the "
                f"cause: its prompt code shapes this task's {upstream.config})"
            )
    elif order is None:
        why = f"version {old.version} -> {new.version} cannot be ordered"
        fix = "use integer versions (or dotted numbers) that only go up"
    else:
        why = f"its version went down ({old.version} -> {new.version}); versions only go up"
        fix = f"set a version greater than {old.version}, then run --snapshot-update"
    if allow_unversioned and update:
        return Verdict(
            Outcome.UNVERSIONED,
            f"{new.label}: {what} and {why}; recorded anyway (--evaltasks-allow-unversioned)",
            True,
            True,
            docs,
            fields,
            settings,
            [f"recorded a change although {why} (--evaltasks-allow-unversioned)"],
        )
    refusal = "the update is refused" if update else "the snapshot no longer matches"
    return Verdict(
        Outcome.UNVERSIONED,
        f"{new.label}: {what}, but {why}; {refusal}: {fix} "
        f"(or pass --evaltasks-allow-unversioned to record it anyway)",
        False,
        False,
        docs,
        fields,
        settings,
    )


def owned_fix(upstream: Upstream) -> str:
    """What to do when a task its harness owns changed with no upgrade of the harness: its
    version is not the user's to bump. The installed copy was edited, or something it reads
    changed: reinstall, or make the change a task of one's own."""
    name = upstream.name
    return (
        f"its {upstream.config} is {name}'s own, with no version of yours to bump: if the "
        f"installed {name} was edited, reinstall it (pip install --force-reinstall); to change "
        f"the task, copy its {upstream.config} into your task folder under a new name and give "
        f"that copy a version"
    )


def compare_docs(old: SnapshotFacts, new: SnapshotFacts, partial: bool = False) -> DocChanges:
    """Which docs differ; in a partial run, the docs it rendered against their recorded hashes
    (one it rendered that the file lacks is a change: the task's docs are not those recorded)."""
    if not partial and old.hash_text == new.hash_text:
        return DocChanges(compared=new.num_docs)  # the usual case: nothing to parse
    before, after = old.doc_hashes, new.doc_hashes
    changed = [
        label for label, digest in after.items() if label in before and before[label] != digest
    ]
    added = [label for label in after if label not in before]
    if partial:
        return DocChanges(changed, added, compared=len(after))
    removed = [label for label in before if label not in after]
    return DocChanges(changed, added, removed, compared=len(after))


_DOTTED = re.compile(r"\d+(\.\d+)*")


def version_order(old: str, new: str) -> int | None:
    """1 when `new` is greater, 0 when equal, -1 when smaller, None when they cannot be ordered.

    Versions are ints or strings as the config gives them (recorded as JSON); dotted numbers
    (`"1.2"`) compare part by part, so `"1.10"` is greater than `"1.9"`.
    """
    if old == new:
        return 0
    left, right = _version_key(old), _version_key(new)
    if left is None or right is None:
        return None
    return (right > left) - (right < left)


def _version_key(recorded: str) -> tuple[int, ...] | None:
    """A recorded version as a tuple of numbers, or None when it is not numeric.

    An int, a float (a YAML `1.0`) or a dotted string: `1`, `1.0` and `"1.0"` are the
    same version, and `"1.10"` is greater than `"1.9"`.
    """
    try:
        value = json.loads(recorded)
    except ValueError:
        value = recorded
    if isinstance(value, bool):
        return None
    if value is None:
        return ()  # no version at all (a YAML task without a version): below any
    if isinstance(value, int):
        return (value,)
    if isinstance(value, float) and math.isfinite(value) and value >= 0:
        value = repr(value)
    if isinstance(value, str) and _DOTTED.fullmatch(value):
        key = tuple(int(part) for part in value.split("."))
        while len(key) > 1 and key[-1] == 0:
            key = key[:-1]
        return key
    return None


def differences(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """`key: old -> new` for every field that differs."""
    keys = list(dict.fromkeys([*old, *new]))
    return [
        f"{key}: {old.get(key, '<absent>')} -> {new.get(key, '<absent>')}"
        for key in keys
        if old.get(key) != new.get(key)
    ]


_RECORDED_DIGEST = re.compile(r"#([0-9a-f]{16})\b")
"""A digest a `[task]` value records an identity by (`facts.value_summary`)."""


def field_changes(old: SnapshotFacts, new: SnapshotFacts) -> list[str]:
    """`key: old -> new` for every content field that differs; a value recorded by digest is
    followed by what changed inside it, a line each (indented), read from the two files'
    outlines (`outline`)."""
    before, after = outline.read_section(old.identities), outline.read_section(new.identities)
    was, now = old.content(), new.content()
    found = []
    for change in differences(was, now):
        key = change.partition(": ")[0]
        inside = _inside(was.get(key, ""), now.get(key, ""), before, after)
        found.append("\n".join([change, *(f"  {line}" for line in inside)]))
    return found


def _inside(
    was: str,
    now: str,
    before: dict[str, tuple[str, ...]],
    after: dict[str, tuple[str, ...]],
) -> list[str]:
    """What changed inside the values a field records by digest: a digest only the old value
    holds is paired with the first one only the new value holds of the same kind (its
    outline's first line), so a metric added or removed beside a changed one is not read as
    its change; a value with no partner is named by the field's own line."""
    gone = [d for d in _RECORDED_DIGEST.findall(was) if d not in now and d in before]
    new = [d for d in _RECORDED_DIGEST.findall(now) if d not in was and d in after]
    lines: list[str] = []
    for old_digest in gone:
        kind = before[old_digest][:1]
        partner = next((d for d in new if after[d][:1] == kind), None)
        if partner is None:
            continue
        new.remove(partner)
        found = outline.changes(before[old_digest], after[partner])
        lines += found or [
            f"#{old_digest} -> #{partner}: the change is in what its outline does not show "
            f"(its code, or the machinery behind it)"
        ]
    return lines


def describe_change(docs: DocChanges, fields: list[str], settings: list[str]) -> str:
    """A one-line summary: which docs, which `[task]` fields, which settings."""
    parts = [docs.describe()] if docs.all else []
    if fields:
        parts.append(f"task fields changed ({_keys(fields)})")
    if settings:
        parts.append(f"run settings changed ({_keys(settings)})")
    return ", ".join(part for part in parts if part)


def ids(labels: list[str], limit: int = IDS_IN_HEADLINE) -> str:
    """`ids 1, 2, 3` or `ids 1, 2, 3, ... (+7 more)`."""
    shown = ", ".join(labels[:limit])
    more = f", ... (+{len(labels) - limit} more)" if len(labels) > limit else ""
    return f"id{'s' if len(labels) > 1 else ''} {shown}{more}"


def _keys(changes: list[str]) -> str:
    """The field names of `key: old -> new` lines."""
    return ", ".join(change.partition(":")[0] for change in changes)
