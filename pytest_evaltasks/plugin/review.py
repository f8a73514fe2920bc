"""What a reviewer reads first, for every report format: the order of items, and which failures
share one block.

Items are ordered failures first, then passing changes to review, then the rest. Tasks whose
diffs make the same edits (one template word changed across 57 MMLU subjects) form one group,
shown once with its members listed: `groups`. A failure body is split into its `text` and
`diff` runs (`segments`) the same way for Markdown and HTML.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..snapshot.visible import CODE_POINT, common_ends, runs
from .summary import ItemResult

_KINDS = {"task": 0, "module": 1, "orphan": 2}


def order(result: ItemResult, outcomes: Mapping[str, str]) -> tuple[int, int, str]:
    """Failures first, then passing items with a change to review, then the rest; within
    each, tasks, broken modules, orphans; then by label (the same order serially and under
    xdist, whatever order the reports arrive in)."""
    rank = 0 if failed(result, outcomes) else 1 if result.details else 2
    return (rank, _KINDS.get(result.kind, 3), result.label)


def failed(result: ItemResult, outcomes: Mapping[str, str]) -> bool:
    """Whether the item did not pass (an item with no outcome never ran to the end)."""
    return outcomes.get(result.label, "failed") != "passed"


def partition(
    results: list[ItemResult], outcomes: Mapping[str, str]
) -> tuple[list[ItemResult], list[ItemResult], list[ItemResult]]:
    """`results` (in order) as what failed, what passed with a change to review (a versioned
    change since the base), and the rest: the sections every report has."""
    failing: list[ItemResult] = []
    reviewed: list[ItemResult] = []
    rest: list[ItemResult] = []
    for result in results:
        if failed(result, outcomes):
            failing.append(result)
        elif result.details and result.headline:
            reviewed.append(result)
        else:
            rest.append(result)
    return failing, reviewed, rest


def headline(result: ItemResult) -> str:
    """The headline without the item's label in front (the block names it already)."""
    text = result.headline
    prefix = f"{result.label}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


def segments(lines: list[str]) -> list[tuple[str, list[str]]]:
    """A failure body as `text` and `diff` runs. A diff follows a line ending in
    `(recorded -> current):` and is indented by two spaces in the terminal; here it is not."""
    parts: list[tuple[str, list[str]]] = []
    in_diff = False
    for line in lines:
        if in_diff and line.startswith("  "):
            parts[-1][1].append(line[2:])
            continue
        in_diff = False
        if not parts or parts[-1][0] != "text":
            parts.append(("text", []))
        parts[-1][1].append(line)
        if line.endswith("(recorded -> current):"):
            parts.append(("diff", []))
            in_diff = True
    return parts


def diff_lines(result: ItemResult) -> list[str]:
    """The lines of an item's diffs, un-indented."""
    return [line for kind, part in segments(result.details) if kind == "diff" for line in part]


def group_key(result: ItemResult) -> object | None:
    """What two tasks must share to be shown as one: the same outcome, and the same edits in
    their diffs (each changed line reduced to the words that changed, so the doc ids, hunk
    positions, the other text of a line and the task's own name do not count) and the same
    field changes; or, without a diff, the same body once the task's name is taken out.
    None: never grouped."""
    if result.kind != "task" or not result.details:
        return None
    plain = unnamer(result.label)
    diff = [plain(line) for line in diff_lines(result)]
    if not diff:
        return ("body", result.outcome.value, tuple(plain(line) for line in result.details))
    changes = edits(diff)
    if not changes:
        return None
    fields = []
    heading = ""
    for kind, part in segments(result.details):
        for line in part if kind == "text" else ():
            if not line.startswith(" "):
                heading = line
            elif heading in ("task fields changed:", "run settings changed:"):
                fields.append(plain(line))
    return ("diff", result.outcome.value, tuple(sorted(set(changes))), tuple(fields))


def unnamer(label: str) -> Callable[[str], str]:
    """Replace a task's names in a line (`mmlu:high_school_biology|5`, the task name, its
    subset `high_school_biology` and `high school biology`) by one placeholder."""
    name = label.split("|", 1)[0].split("@", 1)[0]
    subset = name.rsplit(":", 1)[-1]
    variants = {label, name, subset, subset.replace("_", " ")}
    ordered = sorted((v for v in variants if len(v) >= 3), key=len, reverse=True)

    def plain(line: str) -> str:
        for variant in ordered:
            line = line.replace(variant, "\x00")
        return line

    return plain


def edits(diff: list[str]) -> list[tuple[str, ...]]:
    """Each change of a diff: a removed line paired with the added line in its place, reduced
    to the words that differ; a line only removed or only added, whole."""
    found: list[tuple[str, ...]] = []
    kept = (line for line in diff if not line.startswith(("- [doc ", "+ [doc ", "?")))
    for run in runs(kept):  # a doc's position and a guide line are not edits
        if isinstance(run, str):
            continue
        removed, added = run
        found += [("~", *changed_words(old, new)) for old, new in zip(removed, added, strict=False)]
        found += [("-", line.strip()) for line in removed[len(added) :]]
        found += [("+", line.strip()) for line in added[len(removed) :]]
    return found


def changed_words(old: str, new: str) -> tuple[str, str]:
    """The part of `old` that `new` replaced, widened to whole words: `| Answer: D` and
    `| ANSWER: D` give `Answer:` and `ANSWER:`. A change of nothing visible (a space doubled, a
    zero-width space written `⟨U+200B⟩`) is not widened: the word beside it differs from doc to
    doc, and the change does not."""
    start, old_end, new_end = common_ends(old, new)
    if _unseen(old[start:old_end]) and _unseen(new[start:new_end]):
        return old[start:old_end], new[start:new_end]
    while start > 0 and not old[start - 1].isspace():
        start -= 1
    while old_end < len(old) and not old[old_end].isspace():
        old_end += 1
        new_end += 1
    return old[start:old_end].strip(), new[start:new_end].strip()


def _unseen(text: str) -> bool:
    """Whether `text` is only whitespace and hidden characters written as code points."""
    return not CODE_POINT.sub("", text).strip()


@dataclass(frozen=True)
class Group:
    """Items shown as one block: one item alone, or tasks that changed the same way."""

    members: list[ItemResult]

    @property
    def first(self) -> ItemResult:
        """The member whose body the block shows."""
        return self.members[0]


def groups(results: list[ItemResult]) -> list[Group]:
    """`results` (in order) as blocks: members that share a `group_key` together, where the
    first of them stood."""
    found: dict[object, list[ItemResult]] = {}
    for position, result in enumerate(results):
        key = group_key(result)
        found.setdefault(key if key is not None else position, []).append(result)
    return [Group(members) for members in found.values()]


def task_name(label: str) -> str:
    """The task an item checks: its label without the shot count (`mmlu:anatomy|5` ->
    `mmlu:anatomy`)."""
    return label.split("|", 1)[0]


def items_and_tasks(labels: list[str]) -> str:
    """`57 tasks` when each item is its own task, else `114 items of 57 tasks`."""
    tasks = len({task_name(label) for label in labels})
    if tasks == len(labels):
        return f"{tasks:,} task{'' if tasks == 1 else 's'}"
    return f"{len(labels):,} items of {tasks:,} task{'' if tasks == 1 else 's'}"
