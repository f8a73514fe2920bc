"""The whole check of one task item (`snapshot.check`), in-process: each way around the gate
that was seen, and each false alarm, as a decision over real builds of a small project."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_evaltasks import Registry
from pytest_evaltasks.engine.rendered import DocsRendered
from pytest_evaltasks.engine.run_settings import RunSettings
from pytest_evaltasks.snapshot.built import BuiltSnapshot, build_snapshot
from pytest_evaltasks.snapshot.check import (
    Built,
    CheckMode,
    Decision,
    FreshBuildError,
    RecordedInput,
    check,
)
from pytest_evaltasks.snapshot.facts import FORMAT_VERSION
from pytest_evaltasks.snapshot.gate import Outcome
from pytest_evaltasks.snapshot.layout import layout

LABEL = "capitals|1"
CAPITALS = [
    ("France", "Paris"),
    ("Italy", "Rome"),
    ("Spain", "Madrid"),
    ("Peru", "Lima"),
    ("Kenya", "Nairobi"),
    ("Japan", "Tokyo"),
]
MODULE = """
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

PREFIX = {prefix!r}

def prompt(row, task_name):
    return Doc(query=f"{{PREFIX}}{{row['country']}}?\\nA:", choices=[" " + row["capital"]],
               gold_index=0)

TASKS_TABLE = [LightevalTaskConfig(name="capitals", prompt_function=prompt, hf_repo="me/capitals",
    hf_subset="default", evaluation_splits=["test"], few_shots_split="train",
    metrics=[Metrics.exact_match], version={version!r})]
"""


class Project:
    """A one-task project in a folder: its module and data can be edited between builds."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.write(version=0)
        self.rows(CAPITALS)

    def write(self, version: Any = 0, prefix: str = "Capital of ") -> None:
        tasks = self.root / "tasks"
        tasks.mkdir(parents=True, exist_ok=True)
        (tasks / "capitals.py").write_text(
            textwrap.dedent(MODULE.format(prefix=prefix, version=version)), encoding="utf-8"
        )

    def rows(
        self, capitals: list[tuple[str, str]], splits: tuple[str, ...] = ("test", "train")
    ) -> None:
        data = self.root / "data" / "me" / "capitals" / "default"
        data.mkdir(parents=True, exist_ok=True)
        for split in splits:
            lines = [json.dumps({"country": c, "capital": k}) for c, k in capitals]
            (data / f"{split}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")

    def build(self, max_samples: int | None = None, hash_seed: int | None = None) -> BuiltSnapshot:
        registry = Registry([self.root / "tasks"], data_dir=self.root / "data")
        (task,) = registry.load(LABEL)
        settings = RunSettings(max_samples=max_samples)
        return build_snapshot(
            DocsRendered.of(task, task.build(max_samples)), settings, None, self.root, hash_seed
        )


class Builds:
    """`check`'s builds: `here` builds the project as it is now; `fresh` as `fresh_of` says
    (by default, the same build: a deterministic task), and on another machine as
    `elsewhere_of` says (by default, as `fresh_of`)."""

    def __init__(
        self,
        here: Callable[[], Built],
        fresh_of: Callable[[int], Built] | None = None,
        other_seed: int = 0,
        elsewhere_of: Callable[[int], Built] | None = None,
    ) -> None:
        self._here = here
        self._fresh_of = fresh_of or (lambda seed: here())
        self._elsewhere_of = elsewhere_of or self._fresh_of
        self.other_seed = other_seed
        self.fresh_calls: list[int] = []
        self.elsewhere_calls: list[int] = []
        self.older_asked: list[tuple[int, ...]] = []

    def here(self) -> Built:
        return self._here()

    def fresh(
        self, hash_seed: int, docs_shown: int, older: tuple[int, ...] = (), elsewhere: bool = False
    ) -> Built:
        self.fresh_calls.append(hash_seed)
        self.older_asked.append(older)
        if elsewhere:
            self.elsewhere_calls.append(hash_seed)
            return self._elsewhere_of(hash_seed)
        return self._fresh_of(hash_seed)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


WHERE = "tasks/__snapshots__/capitals-1.txt"


def run(
    project: Project,
    recorded: str | None,
    update: bool = False,
    base: str | bool | None = False,
    max_samples: int | None = None,
    builds: Builds | None = None,
    allow_unversioned: bool = False,
) -> Decision:
    """One check of the project as it is, against `recorded` (and `base`, when not False)."""
    base_input = None if base is False else RecordedInput(f"{WHERE} at main", base)  # type: ignore[arg-type]
    return check(
        LABEL,
        RecordedInput(WHERE, recorded),
        base_input,
        builds or Builds(lambda: project.build(max_samples)),
        CheckMode(update=update, allow_unversioned=allow_unversioned, base_ref="main"),
    )


def record(project: Project) -> str:
    """The snapshot an update writes for the project as it is."""
    decision = run(project, None, update=True)
    assert decision.outcome is Outcome.NEW and decision.passes and decision.write
    return decision.write


# --- the record cannot be laundered ----------------------------------------------------------


def test_a_smaller_max_samples_checks_the_docs_it_rendered_and_says_how_many(
    project: Project,
) -> None:
    recorded = record(project)
    decision = run(project, recorded, max_samples=2)
    assert decision.outcome is Outcome.UNCHANGED and decision.passes
    assert decision.checked == (2, 6)
    assert "2 of 6 docs checked" in decision.headline


def test_max_samples_cannot_launder_a_changed_row(project: Project) -> None:
    """Tokyo -> Kyoto in one row, version unchanged: no sequence of updates records it."""
    recorded = record(project)
    project.rows([*CAPITALS[:5], ("Japan", "Kyoto")], splits=("test",))
    full = project.build()
    changed = [
        label
        for label, digest in full.facts.doc_hashes.items()
        if digest != _hashes(recorded)[label]
    ]
    assert changed == ["5"]
    position = full.position_of("5")
    assert position is not None
    for max_samples in range(1, 7):
        partial = run(project, recorded, update=True, max_samples=max_samples)
        assert partial.write is None  # a partial run never writes, changed or not
        if position < max_samples < 6:
            assert not partial.passes and partial.outcome is Outcome.PARTIAL
        elif max_samples <= position:
            assert partial.passes and partial.checked == (max_samples, 6)
    refused = run(project, recorded, update=True)
    assert refused.outcome is Outcome.UNVERSIONED and refused.write is None
    assert "1 of 6 docs changed (id 5)" in refused.headline


def test_a_partial_run_never_records_a_new_snapshot(project: Project) -> None:
    decision = run(project, None, update=True, max_samples=2)
    assert decision.outcome is Outcome.PARTIAL and decision.write is None and not decision.passes


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        pytest.param(
            lambda t: t.replace(
                f"snapshot, format {FORMAT_VERSION}", f"snapshot, format {FORMAT_VERSION + 1}"
            ),
            "written by a newer pytest-evaltasks",
            id="newer-format",
        ),
        pytest.param(
            lambda t: t.replace(f"snapshot, format {FORMAT_VERSION}", "snapshot, format 2"),
            "edited by hand",
            id="older-format-label",
        ),
        pytest.param(
            lambda t: _replace_line(t, "content: sha256:", "content: sha256:" + "0" * 64),
            "its [fingerprint] does not match its content",
            id="zeroed-fingerprint",
        ),
        pytest.param(
            lambda t: t.replace("[doc hashes] 6 docs", "[doc hashes] 999 docs"),
            "says 999 docs, but it lists 6",
            id="doc-count",
        ),
        pytest.param(
            lambda t: t.replace("[layout]\n", "[settings]\nsystem_prompt: null\n\n[layout]\n"),
            "the [settings] section appears twice",
            id="duplicated-section",
        ),
        pytest.param(
            lambda t: t.replace("docs: 6\n", "docs: 6\ndocs: 6\n"),
            "the key 'docs' appears twice",
            id="duplicated-key",
        ),
        pytest.param(
            lambda t: t.replace("name: capitals|1", "name: capitals|2"),
            "edited by hand",
            id="relabelled",
        ),
        pytest.param(
            lambda t: _edit_hash_lines(t, lambda lines: [lines[1], lines[0], *lines[2:]]),
            "its [doc hashes] are not in label order",
            id="hash-lines-swapped",
        ),
        pytest.param(
            lambda t: _edit_hash_lines(t, lambda lines: [lines[0], lines[0], *lines[2:]]),
            "a doc label appears twice in [doc hashes]",
            id="hash-label-twice",
        ),
        pytest.param(
            lambda t: _edit_hash_lines(t, lambda lines: ["0" + lines[0], *lines[1:]]),
            "edited by hand",
            id="hash-label-leading-zero",
        ),
        pytest.param(
            lambda t: _edit_hash_lines(t, lambda lines: [lines[0][:-1] + "G", *lines[1:]]),
            "is not `LABEL DIGEST`",
            id="hash-digest-not-hex",
        ),
    ],
)
@pytest.mark.parametrize("update", [False, True])
def test_a_hand_edited_file_fails_and_is_never_overwritten(
    project: Project, edit: Callable[[str], str], says: str, update: bool
) -> None:
    edited = edit(record(project))
    project.write(prefix="Capital city of ")  # an unversioned change rides along
    decision = run(project, edited, update=update)
    assert not decision.passes and decision.write is None
    assert decision.outcome is Outcome.UNREADABLE
    assert says in decision.headline
    assert ("the update is refused" in decision.headline) is update
    assert "delete" not in decision.headline


def test_a_file_of_another_task_is_not_this_tasks_record(project: Project) -> None:
    other = record(project).replace("name: capitals|1", "name: capitals|2")
    from pytest_evaltasks.snapshot.parse import parse_snapshot

    with pytest.raises(ValueError):
        parse_snapshot(other)  # the fingerprint covers the name


# --- judged against the reviewed record (the base) -------------------------------------------


@pytest.mark.parametrize("update", [False, True])
def test_deleting_the_snapshot_cannot_launder_a_change(project: Project, update: bool) -> None:
    reviewed = record(project)
    project.write(prefix="Capital city of ")
    decision = run(project, None, update=update, base=reviewed)
    assert decision.outcome is Outcome.BASE and not decision.passes and decision.write is None
    assert "changed since main without a version bump" in decision.headline
    assert "6 of 6 docs changed" in decision.headline


def test_a_re_recorded_working_copy_is_judged_against_the_base(project: Project) -> None:
    reviewed = record(project)
    project.write(prefix="Capital city of ")
    laundered = run(project, None, update=True).write  # as if the file were deleted, re-recorded
    assert laundered is not None
    decision = run(project, laundered, base=reviewed)
    assert decision.outcome is Outcome.BASE and not decision.passes


def test_two_branches_bumping_to_the_same_version_fail_after_the_merge(project: Project) -> None:
    """Branch A and branch B both bump 0 -> 1 with different prompt changes; A lands first.
    The merge of B is judged against main (A's version 1): version 1 now names a prompt
    neither reviewer saw."""
    project.write(version=1, prefix="A: capital of ")
    main = record(project)
    project.write(version=1, prefix="A+B: capital of ")  # both changes, after the merge
    merged = run(project, None, update=True).write
    decision = run(project, merged, base=main)
    assert decision.outcome is Outcome.BASE
    assert "bump the task's `version` above 1" in decision.headline


def test_a_version_bump_since_the_base_is_a_reviewed_change(project: Project) -> None:
    reviewed = record(project)
    project.write(version=1, prefix="Capital city of ")
    decision = run(project, reviewed, update=True, base=reviewed)
    assert decision.outcome is Outcome.VERSIONED and decision.passes and decision.write


def test_a_version_that_went_down_since_the_base_fails(project: Project) -> None:
    project.write(version=2)
    reviewed = record(project)
    project.write(version=1)
    ours = run(project, None, update=True).write
    decision = run(project, ours, base=reviewed)
    assert decision.outcome is Outcome.BASE and "went down (2 -> 1)" in decision.headline


def test_a_deleted_snapshot_fails_and_an_update_restores_it(project: Project) -> None:
    reviewed = record(project)
    compare = run(project, None, base=reviewed)
    assert compare.outcome is Outcome.DELETED and not compare.passes
    assert f"git checkout main -- {WHERE}" in compare.headline
    update = run(project, None, update=True, base=reviewed)
    assert update.passes and update.write == reviewed


def test_no_base_record_is_a_new_task(project: Project) -> None:
    decision = run(project, None, base=None)
    assert decision.outcome is Outcome.NEW and not decision.passes


def test_an_unreadable_base_is_named_and_the_working_copy_still_judged(project: Project) -> None:
    recorded = record(project)
    decision = run(project, recorded, base="not a snapshot at all\n")
    assert decision.passes and decision.outcome is Outcome.UNCHANGED
    assert any("the base record is not used" in warning for warning in decision.warnings)


# --- older formats ----------------------------------------------------------------------------


def _format_2(built: BuiltSnapshot) -> str:
    """The file format 2 wrote for this build (its hashing and header kept in format_v2)."""
    text = layout(built.facts_in(2), 3, [built.block(p) for p in range(3)])
    return text.replace(f"snapshot, format {FORMAT_VERSION}", "snapshot, format 2")


def _format_3(built: BuiltSnapshot) -> str:
    """The file format 3 wrote for this build (its identities: `format_3_identities`)."""
    text = layout(built.facts_in(3), 3, [built.block(p) for p in range(3)])
    assert text.startswith("# pytest-evaltasks snapshot, format 3\n")
    return text


def test_a_format_2_file_is_migrated_when_its_content_is_verified(project: Project) -> None:
    old = _format_2(project.build())
    compare = run(project, old)
    assert compare.outcome is Outcome.FORMAT and not compare.passes
    assert "its content is verified unchanged" in compare.headline
    update = run(project, old, update=True)
    assert update.outcome is Outcome.FORMAT and update.passes
    assert update.write is not None and update.write.startswith(
        f"# pytest-evaltasks snapshot, format {FORMAT_VERSION}"
    )


def test_a_format_2_file_cannot_launder_a_change(project: Project) -> None:
    old = _format_2(project.build())
    project.write(prefix="Capital city of ")
    decision = run(project, old, update=True)
    assert decision.outcome is Outcome.UNVERSIONED and decision.write is None


OWN_METRIC = """
import dataclasses


def scored(pred, gold):
    return float(pred.strip() == gold.strip())


@dataclasses.dataclass
class Metric:
    metric_name: str
    sample_level_fn: object
    category: str = "GENERATIVE"
"""


def _with_own_metric(project: Project, edit: tuple[str, str] = ("", "")) -> None:
    """The task scored by a metric function of its own module (digested by its code)."""
    path = project.root / "tasks" / "capitals.py"
    head, _, rest = path.read_text(encoding="utf-8").partition("\nPREFIX")
    rest = rest.replace("metrics=[Metrics.exact_match]", 'metrics=[Metric("em", scored)]')
    path.write_text(head + OWN_METRIC.replace(*edit) + "\nPREFIX" + rest, encoding="utf-8")


def test_a_format_3_file_is_migrated_when_its_content_is_verified(project: Project) -> None:
    """Format 3 digested own code by its bytecode (another digest under each Python): its
    files are verified with its own identities, then rewritten."""
    _with_own_metric(project)
    built = project.build()
    assert built.facts_in(3).task["metrics"] != built.facts.task["metrics"]
    old = _format_3(built)
    compare = run(project, old)
    assert compare.outcome is Outcome.FORMAT and not compare.passes
    assert "its content is verified unchanged" in compare.headline
    update = run(project, old, update=True)
    assert update.outcome is Outcome.FORMAT and update.passes
    assert update.write == built.text(3)


def test_a_format_3_file_cannot_launder_a_scoring_change(project: Project) -> None:
    _with_own_metric(project)
    old = _format_3(project.build())
    _with_own_metric(project, (".strip() ==", ".strip().lower() =="))
    decision = run(project, old, update=True)
    assert decision.outcome is Outcome.UNVERSIONED and decision.write is None
    assert "metrics" in decision.headline


def test_fresh_builds_give_older_facts_only_for_a_record_in_that_format(project: Project) -> None:
    """Older formats' facts cost work (format 2 hashes every doc again): a fresh process is
    asked for them only when a record it is judged against is in that format."""
    old, previous = _format_2(project.build()), _format_3(project.build())
    current = record(project)
    project.write(prefix="Capital city of ")
    for text, wanted in ((old, (2,)), (previous, (3,)), (current, ())):
        builds = Builds(project.build)
        run(project, text, update=True, builds=builds)
        assert builds.fresh_calls, "a change is rebuilt in a fresh process"
        assert set(builds.older_asked) == {wanted}


def test_format_1_is_refused_as_unverifiable(project: Project) -> None:
    text = record(project).replace(f"snapshot, format {FORMAT_VERSION}", "snapshot, format 1")
    decision = run(project, text, update=True)
    assert decision.outcome is Outcome.UNREADABLE and decision.write is None
    assert "cannot verify" in decision.headline


# --- nondeterminism is named for what it is ---------------------------------------------------


def test_a_build_that_differs_within_one_process_is_nondeterministic(project: Project) -> None:
    recorded = record(project)
    prefixes = iter(["Capital city of ", "Capital town of "])

    def here() -> Built:
        project.write(prefix=next(prefixes))
        return project.build()

    decision = run(project, recorded, builds=Builds(here))
    assert decision.outcome is Outcome.NONDETERMINISTIC
    assert "two builds in the same run differ" in decision.headline
    assert "bump" not in decision.headline


def test_a_build_that_differs_in_a_fresh_process_is_never_blamed_on_the_version(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Import-time randomness: each process builds other prompts, every fresh one differs."""
    recorded = record(project)
    project.write(prefix="Capital city of ")
    here = project.build()
    others = iter([f"Process {n}: " for n in range(5)])
    elsewhere = Project(tmp_path_factory.mktemp("elsewhere"))

    def fresh(seed: int) -> Built:
        elsewhere.write(prefix=next(others))
        return elsewhere.build()

    builds = Builds(lambda: here, fresh)
    decision = run(project, recorded, builds=builds)
    assert decision.outcome is Outcome.NONDETERMINISTIC
    assert "nondeterministic across processes (hash seed, set order" in decision.headline
    assert "version" not in decision.headline
    assert builds.fresh_calls[0] == 0


def test_a_prompt_that_names_a_machine_path_is_nondeterministic_never_unversioned(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Built as on another machine (another home and temporary folder), the prompts differ:
    the change is named as a dependence on the machine, and nothing is recorded."""
    recorded = record(project)
    project.write(prefix="Capital (see /home/one/notes) of ")
    elsewhere = Project(tmp_path_factory.mktemp("elsewhere"))
    elsewhere.write(prefix="Capital (see /home/two/notes) of ")
    builds = Builds(project.build, elsewhere_of=lambda seed: elsewhere.build())
    for update in (False, True):
        decision = run(project, recorded, update=update, builds=builds)
        assert decision.outcome is Outcome.NONDETERMINISTIC
        assert "its prompts depend on the machine" in decision.headline
        assert "version" not in decision.headline and decision.write is None
    new = run(project, None, update=True, builds=builds)
    assert new.outcome is Outcome.NONDETERMINISTIC and new.write is None
    # the same prompts everywhere: one probe on another machine, then judged as usual
    steady = Builds(project.build)
    assert run(project, recorded, builds=steady).outcome is not Outcome.NONDETERMINISTIC
    assert steady.elsewhere_calls == [0]


def test_a_hash_seed_dependent_task_is_recorded_under_a_fixed_seed(
    project: Project, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Set order: this process builds one order, every process under seed 0 another."""
    seeded = Project(tmp_path_factory.mktemp("seed0"))
    seeded.write(prefix="Seed-0 order of ")
    builds = Builds(project.build, lambda seed: seeded.build(hash_seed=seed))
    decision = run(project, None, update=True, builds=builds)
    assert decision.outcome is Outcome.NEW and decision.passes
    assert decision.hash_seed == 0
    assert decision.write is not None
    assert "hash_seed: 0" in decision.write and "Seed-0 order of" in decision.write
    assert any("depend on PYTHONHASHSEED" in warning for warning in decision.warnings)
    # From then on the task is built in a fresh process under seed 0 and passes in any process.
    again = Builds(project.build, lambda seed: seeded.build(hash_seed=seed))
    compare = run(project, decision.write, builds=again)
    assert compare.outcome is Outcome.UNCHANGED and compare.passes
    assert again.fresh_calls == [0]


def test_a_fresh_process_that_cannot_build_is_named(project: Project) -> None:
    recorded = record(project)
    project.write(prefix="Capital city of ")

    def broken(seed: int) -> Built:
        raise FreshBuildError("a fresh process could not build it: ImportError: no module x")

    decision = run(project, recorded, builds=Builds(project.build, broken))
    assert decision.outcome is Outcome.NONDETERMINISTIC and "ImportError" in decision.headline


def test_a_deterministic_change_is_still_blamed_on_the_version(project: Project) -> None:
    recorded = record(project)
    project.write(prefix="Capital city of ")
    builds = Builds(project.build)
    decision = run(project, recorded, builds=builds)
    assert decision.outcome is Outcome.UNVERSIONED
    assert builds.fresh_calls == [0]  # checked in a fresh process before blaming the version


def test_an_unchanged_task_never_starts_a_fresh_process(project: Project) -> None:
    recorded = record(project)
    builds = Builds(project.build)
    assert run(project, recorded, builds=builds).passes
    assert builds.fresh_calls == []


# --- reports stay bounded ---------------------------------------------------------------------


def test_a_failure_report_is_bounded_however_long_the_prompts(project: Project) -> None:
    long_prefix = "word " * 400_000  # 2 MB prompts
    project.write(prefix=long_prefix)
    recorded = record(project)
    project.write(prefix=long_prefix.replace("word", "Word", 1))
    decision = run(project, recorded)
    assert decision.report is not None
    text = decision.report.render()
    assert len(text) < 100_000
    assert "more characters cut" in text


def _hashes(text: str) -> dict[str, str]:
    from pytest_evaltasks.snapshot.parse import parse_snapshot

    return parse_snapshot(text).doc_hashes


def _edit_hash_lines(text: str, edit: Callable[[list[str]], list[str]]) -> str:
    """The text with its [doc hashes] lines replaced by `edit` of them."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("[doc hashes]")) + 1
    end = lines.index("", start)
    return "\n".join([*lines[:start], *edit(lines[start:end]), *lines[end:]])


def _replace_line(text: str, start: str, new: str) -> str:
    return "\n".join(new if line.startswith(start) else line for line in text.split("\n"))
