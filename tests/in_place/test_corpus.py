"""Every lighteval task, rendered by us and by lighteval itself on synthesized rows.

Needs lighteval 0.13 (`tox -e lighteval`, or the harnesses venv of `.ci/run`); skipped without it.
The cases are every task of lighteval's `tasks/tasks` folder (its subfolders' `main.py`
included) and, of every `multilingual/tasks` module, a sample and every task we cannot
request; at 0 and 3 shots, some at 5, some with a system prompt (a list of few-shot splits: at
0 shots only, lighteval fails on it beyond). Rows come from `synthesize`, which derives them
from each prompt function's own behaviour; `EVALTASKS_CORPUS_SEED` picks other rows and
another sample.

Each case is rendered by our registry (lighteval's folders in place) and by lighteval's
`LightevalTask` and `PromptManager` (`reference.py`), and classified. A case fails when it
differs in a way docs/differences-from-lighteval.md does not list, or when we refuse (or crash on) a
task lighteval renders. Unsynthesizable tasks, tasks lighteval cannot render and
tasks both sides refuse are counted, not failed. `test_corpus_summary` runs last: it gathers
every case's outcome (from all xdist workers, through files in the session's temporary
folder; a case not rendered yet it renders itself), reports the counts (printed, as a
`CorpusSummary` warning and as the `corpus_counts` property) and lists the unexplained cases.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import random
import re
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

lighteval = pytest.importorskip("lighteval")

import synthesize  # noqa: E402
from reference import lighteval_prompts, our_prompts  # noqa: E402

from pytest_evaltasks import Registry  # noqa: E402
from pytest_evaltasks.engine.task_string import TaskRequest  # noqa: E402
from pytest_evaltasks.errors import EvalTaskError  # noqa: E402

TASKS = Path(lighteval.__file__).parent / "tasks"
LIGHTEVAL_TASKS = TASKS / "tasks"
MULTILINGUAL_TASKS = TASKS / "multilingual" / "tasks"
SEED = synthesize.corpus_seed()
PER_MODULE = 3
"""Tasks sampled from each multilingual module."""
EXTRA = 0.15
"""The share of tasks also checked at 5 shots, and with a system prompt."""
SYSTEM_PROMPT = "You are a careful grader."
WAIT = 900.0
"""Seconds to wait for a case another worker is rendering."""

LISTED_REFUSAL = "is out of range for"
"""docs/lighteval-in-place.md: a gold index out of range of the choices is refused (lighteval
renders it at 0 shots, then fails when a metric or a few-shot example reads the gold): the one
refusal of a doc lighteval would send."""

EQUAL = "equal"
LISTED = "differs, listed"
DIFFERS = "differs"
REFUSED = "refused by us"
CRASHED = "crashed in our engine"
THEY_FAIL = "lighteval cannot render"
BOTH_FAIL = "both fail"
UNSYNTHESIZABLE = "unsynthesizable"
CLASSES = (EQUAL, LISTED, THEY_FAIL, BOTH_FAIL, UNSYNTHESIZABLE, DIFFERS, REFUSED, CRASHED)
FAILING = (DIFFERS, REFUSED, CRASHED)


class CorpusSummary(UserWarning):
    """The corpus counts, shown in pytest's warnings summary (also under xdist)."""


# the corpus --------------------------------------------------------------------------------


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No warnings, logging or progress bars from the task code, lighteval or `datasets`."""
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logging.disable(previous)


@functools.cache
def registry() -> Registry:
    """Our registry over both lighteval folders, in place (once per process)."""
    with quiet():
        return Registry([LIGHTEVAL_TASKS, MULTILINGUAL_TASKS], data_dir=None)


@functools.cache
def lighteval_configs() -> dict[str, tuple[Path, Any]]:
    """Each name's module file and config as lighteval's own registry keeps them (a name
    defined twice: the last definition). Names we refuse are here too, so they are cases."""
    configs: dict[str, tuple[Path, Any]] = {}
    for loaded in registry().modules:
        for config in getattr(loaded.module, "TASKS_TABLE", None) or []:
            if isinstance(getattr(config, "name", None), str):
                configs[config.name] = (loaded.path, config)
    return configs


@dataclass(frozen=True)
class Case:
    name: str
    shots: int
    system: bool = False

    @property
    def id(self) -> str:
        return f"{self.name}|{self.shots}{'+system' if self.system else ''}"


def corpus_cases() -> list[Case]:
    """Every task of `tasks/tasks`; of each multilingual module, PER_MODULE tasks and every
    one we cannot request (a name defined twice: lighteval renders its last definition)."""
    rng = random.Random(f"{SEED}:cases")
    modules: dict[Path, list[str]] = {}
    for name, (path, _config) in lighteval_configs().items():
        modules.setdefault(path, []).append(name)
    names: list[str] = []
    for path in sorted(modules):
        found = sorted(modules[path])
        if path.is_relative_to(MULTILINGUAL_TASKS) and len(found) > PER_MODULE:
            refused = [name for name in found if name in registry().unusable]
            others = [name for name in found if name not in refused]
            found = sorted([*refused, *rng.sample(others, min(PER_MODULE, len(others)))])
        names += found
    cases: list[Case] = []
    for name in names:
        # lighteval cannot draw from a list of few-shot splits: those are compared at 0 shots
        listed = isinstance(lighteval_configs()[name][1].few_shots_split, (list, tuple))
        shots = [0] if listed else [0, 3, *([5] if rng.random() < EXTRA else [])]
        cases += [Case(name, count) for count in shots]
        if rng.random() < EXTRA:
            cases.append(Case(name, shots[-1], system=True))
    return cases


CASES = corpus_cases()


# one case ----------------------------------------------------------------------------------


@dataclass
class Folders:
    data: Path
    """This worker's synthesized rows, a folder per task."""
    results: Path
    """Every case's outcome, shared by the workers of one session."""


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Folders]:
    import datasets

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    results = shared / "corpus-results"
    results.mkdir(exist_ok=True)
    data = tmp_path_factory.mktemp("corpus-data")
    datasets.disable_progress_bars()
    cache = datasets.config.HF_DATASETS_CACHE
    datasets.config.HF_DATASETS_CACHE = data / ".datasets-cache"  # not the user's cache
    yield Folders(data, results)
    datasets.config.HF_DATASETS_CACHE = cache


@functools.cache
def synthesized(name: str, root: Path) -> tuple[Path, str | None]:
    """The task's rows, written under `root` once per process; or why none could be made."""
    config = lighteval_configs()[name][1]
    with quiet():
        synthesis = synthesize.synthesize(config)
    folder = root / re.sub(r"[^A-Za-z0-9._-]", "_", name)
    if synthesis.error is None:
        synthesize.write(synthesis, folder, config)
    return folder, synthesis.error


def compare(case: Case, root: Path) -> dict[str, Any]:
    """Render `case` both ways and classify it."""
    started = time.perf_counter()
    data, error = synthesized(case.name, root)
    if error is not None:
        return outcome(case, UNSYNTHESIZABLE, " ".join(error.split())[:300], started)
    system = SYSTEM_PROMPT if case.system else None
    config = lighteval_configs()[case.name][1]
    with quiet():
        ours = attempt(lambda: render_ours(case, data, system))
        theirs = attempt(lambda: lighteval_prompts(config, data, case.shots, system))
    if isinstance(ours, BaseException):
        if not isinstance(ours, EvalTaskError):
            return outcome(case, CRASHED, message(ours), started)
        if isinstance(theirs, BaseException):
            detail = f"ours: {message(ours)}; lighteval: {message(theirs)}"
            return outcome(case, BOTH_FAIL, detail, started)
        refusal = message(ours)
        if LISTED_REFUSAL in refusal:
            return outcome(case, LISTED, f"listed refusal: {refusal}", started)
        return outcome(case, REFUSED, refusal, started)
    if isinstance(theirs, BaseException):
        return outcome(case, THEY_FAIL, message(theirs), started)
    our_name, our_docs, task = ours
    their_name, their_docs = theirs
    difference = first_difference(our_name, our_docs, their_name, their_docs)
    if difference is None:
        return outcome(case, EQUAL, "", started)
    listed, dropping = listed_difference(case, task, data, system, our_docs)
    if listed is not None:
        return outcome(case, LISTED, listed, started)
    if dropping is not None:  # beyond the leak removal
        found = first_difference(our_name, our_docs, their_name, dropping)
        difference = f"{found} (lighteval dropping copies of the doc)"
    return outcome(case, DIFFERS, difference, started)


def render_ours(case: Case, data: Path, system: str | None) -> tuple[str, list[Any], Any]:
    reg = registry()
    request = TaskRequest(case.name, case.shots)
    if case.name not in reg.entries:
        reg.resolve([request])  # says why the name cannot be requested
    reg.data_dir = data
    task = reg.make_task(request)  # the task itself, also when its name is a prefix (`bbq`)
    name, docs = our_prompts(task, system)
    return name, docs, task


def attempt(render: Callable[[], Any]) -> Any:
    """What `render` returns, or what it raised."""
    try:
        return render()
    except (Exception, SystemExit) as exc:  # a task module may call exit()
        return exc


def message(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def outcome(case: Case, kind: str, detail: str, started: float) -> dict[str, Any]:
    seconds = round(time.perf_counter() - started, 3)
    return {"case": case.id, "class": kind, "detail": detail, "seconds": seconds}


def first_difference(
    our_name: str, ours: list[dict[str, Any]], their_name: str, theirs: list[dict[str, Any]]
) -> str | None:
    """Where our rendering first differs from lighteval's, or None when they are equal."""
    if our_name != their_name:
        return f"full_name: ours {our_name!r}, lighteval {their_name!r}"
    our_ids, their_ids = [doc["id"] for doc in ours], [doc["id"] for doc in theirs]
    if our_ids != their_ids:
        return f"doc ids: ours {short(our_ids)}, lighteval {short(their_ids)}"
    for mine, reference in zip(ours, theirs, strict=True):
        for field in ("task_name", "fewshot", "plain", "messages"):
            if mine[field] != reference[field]:
                where = around(mine[field], reference[field])
                return f"doc {reference['id']}: {field}: {where}"
    return None


def short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def around(mine: Any, reference: Any) -> str:
    """The two values from just before the first character where they differ."""
    a, b = (value if isinstance(value, str) else repr(value) for value in (mine, reference))
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), len(a))
    start = max(at - 30, 0)
    return f"ours {a[start : at + 50]!r}, lighteval {b[start : at + 50]!r} (at {at})"


def listed_difference(
    case: Case, task: Any, data: Path, system: str | None, ours: list[dict[str, Any]]
) -> tuple[str | None, list[dict[str, Any]] | None]:
    """The difference docs/differences-from-lighteval.md lists that explains this one.

    (1) Leak removal: the few-shot pool is evaluation data, and lighteval, when it too drops
    an example equal to the evaluated doc as a question, renders exactly our docs. (3) A falsy
    label: balanced sampling over a pool holding one (lighteval stops filling the pool there).
    The others change no prompt of a one-task run here ((2), (4), (5), (6): a refusal is a case
    of its own), or are not compared: (7) a list of few-shot splits is compared at 0 shots, (8)
    both sides build in this one process, under one hash seed. Also returns lighteval's docs
    with (1) applied, when it applies, to show what differs beyond it.
    """
    config, dropping = task.config, None
    pool = task.fewshot_splits or list(config.evaluation_splits)
    if case.shots and set(pool) & set(config.evaluation_splits):
        raw = lighteval_configs()[case.name][1]
        with quiet(), lighteval_dropping_copies():
            _name, dropping = lighteval_prompts(raw, data, case.shots, system)
        if dropping == ours:
            return "leak removal compares content (the pool is the evaluation split)", None
    if case.shots and config.few_shots_select in (None, "balanced"):
        with quiet():
            if any(not label(doc) for doc in task.fewshot_docs()):
                return "a falsy label is a normal label (balanced sampling)", None
    return None, dropping


@contextlib.contextmanager
def lighteval_dropping_copies() -> Iterator[None]:
    """lighteval's few-shot sampling as ours differs from it (docs/differences-from-lighteval.md,
    difference 1): an example equal to the evaluated doc as a question is dropped (lighteval
    compares whole docs after renaming the evaluated one, so it never drops one)."""
    from lighteval.tasks.prompt_manager import FewShotSampler

    original = FewShotSampler.sample_fewshot_examples

    def sample(self: Any, num_fewshot: int, variance_seed: int, sampler: Any = None,
               formatted_doc: Any = None) -> list[Any]:  # fmt: skip
        if num_fewshot == 0:
            return []
        self._init_fewshot_pool(num_fewshot=num_fewshot, variance_seed=variance_seed)
        drawn = self._sample_from_pool(
            num_fewshot=num_fewshot, variance_seed=variance_seed, sampler=sampler
        )
        key = same_content_key(formatted_doc)
        return [doc for doc in drawn if same_content_key(doc) != key][:num_fewshot]

    FewShotSampler.sample_fewshot_examples = sample
    try:
        yield
    finally:
        FewShotSampler.sample_fewshot_examples = original


def label(doc: Any) -> Any:
    """The balancing label, as lighteval takes it: the sorting class, else the first gold."""
    try:
        golds = doc.get_golds()
        return doc.fewshot_sorting_class or (golds[0] if isinstance(golds, list) else golds)
    except Exception:  # no gold: not a falsy label
        return True


def same_content_key(doc: Any) -> str:
    """A doc as a question: query, choices, gold and instruction."""
    return repr((doc.query, doc.choices, doc.gold_index, doc.instruction))


def cause(detail: str) -> str:
    """A detail without what names the task (its name, its file, its row)."""
    detail = re.sub(r"task '[^']*'", "task …", detail)
    detail = re.sub(r" \(/[^)]*\)| on split .*|; lighteval: .*", "", detail)
    return detail[:110]


# sharing outcomes between workers ----------------------------------------------------------


def obtain(case: Case, folders: Folders) -> dict[str, Any]:
    """The case's outcome: rendered here, unless another worker claimed it first."""
    digest = hashlib.sha1(case.id.encode()).hexdigest()[:16]
    result = folders.results / f"{digest}.json"
    try:
        os.close(os.open(folders.results / f"{digest}.claim", os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        deadline = time.monotonic() + WAIT
        while not result.exists():
            if time.monotonic() > deadline:
                return {"case": case.id, "class": CRASHED, "detail": "never rendered", "seconds": 0}
            time.sleep(0.05)
        return dict(json.loads(result.read_text(encoding="utf-8")))
    found = compare(case, folders.data)
    partial = result.with_suffix(".part")
    partial.write_text(json.dumps(found), encoding="utf-8")
    partial.replace(result)
    return found


# the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_corpus_case(case: Case, folders: Folders) -> None:
    found = obtain(case, folders)
    assert found["class"] not in FAILING, f"{case.id}: {found['class']}: {found['detail']}"


def test_corpus_summary(
    request: pytest.FixtureRequest, folders: Folders, record_property: Any
) -> None:
    """Every selected case's outcome, counted; fails on the unexplained ones."""
    selected = [
        item.callspec.params["case"]  # type: ignore[attr-defined]
        for item in request.session.items
        if getattr(item, "originalname", None) == "test_corpus_case"
    ]
    if not selected:
        pytest.skip("no corpus case selected")
    started = time.perf_counter()
    outcomes = [obtain(case, folders) for case in selected]
    counts = Counter(found["class"] for found in outcomes)
    rendering = sum(found["seconds"] for found in outcomes)
    line = ", ".join(f"{kind} {counts[kind]}" for kind in CLASSES if counts[kind])
    tasks = len({case.name for case in selected})
    header = (
        f"lighteval corpus (seed {SEED}): {len(selected)} cases of {tasks} tasks: {line} "
        f"(rendering {rendering:.0f} s, summary waited {time.perf_counter() - started:.0f} s)"
    )
    unexplained = [found for found in outcomes if found["class"] in FAILING]
    lines = [header, *grouped(outcomes, (UNSYNTHESIZABLE, THEY_FAIL, BOTH_FAIL, LISTED))]
    if unexplained:
        lines.append(f"{len(unexplained)} unexplained case(s) (first 30):")
        lines += [f"  {f['case']}: {f['class']}: {f['detail']}" for f in unexplained[:30]]
    report = "\n".join(lines)
    print(report)
    record_property("corpus_counts", dict(counts))
    warnings.warn(header, CorpusSummary, stacklevel=1)
    assert not unexplained, report


def grouped(outcomes: list[dict[str, Any]], kinds: tuple[str, ...]) -> list[str]:
    """The allowed non-equal classes, by cause."""
    lines = []
    for kind in kinds:
        causes = Counter(cause(f["detail"]) for f in outcomes if f["class"] == kind)
        if causes:
            lines.append(f"{kind}:")
            lines += [f"  {count:4} x {cause}" for cause, count in causes.most_common(8)]
    return lines
