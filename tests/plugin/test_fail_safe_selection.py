"""Changed-only runs cannot miss what a full run catches, and records hold on every machine.

Each case records and commits a project, changes one file, and checks both runs CI makes: the
full run against the base fails, and the changed-only run selects the task (then fails it
too). The ways a read escaped selection before are each here with variants of their mechanism:
a configuration file given with `-c`, reads in native code, a warm `datasets` cache, files this
package reads itself (images, chat templates beside the named file), a prompt function's first
call. The cases where a record did not hold elsewhere (a cache's state, a machine's home and
temporary folders) are replayed too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from git_project import commit_recorded, git, header, selected, task_module, write

if TYPE_CHECKING:
    from conftest import EvalProject

pytestmark = pytest.mark.slow  # CI runs it; the quick start leaves it out (-m "not slow")


def assert_full_and_changed_fail(project: EvalProject, label: str, *extra: str) -> None:
    """The changed-only step CI runs selects `label` and fails, as the full run does."""
    changed = project.run(
        "--evaltasks", "all", "--evaltasks-changed=main", "--evaltasks-base=main", *extra
    )
    assert f"FAILED evaltasks::{label}" in changed.stdout.str(), changed.stdout.str()
    full = project.run("--evaltasks", "all", "--evaltasks-base=main", *extra)
    assert f"FAILED evaltasks::{label}" in full.stdout.str(), full.stdout.str()


@pytest.mark.parametrize("option", ["-c", "--config-file"])
def test_an_ini_file_given_on_the_command_line(project: EvalProject, option: str) -> None:
    """`-c ci.ini` points the data root at another committed folder on the branch."""
    task_module(project, "configured", 'prefix = "Q: "')
    other = project.root / "other_data" / "demo" / "main"
    shutil.copytree(project.root / "tasks" / "data" / "demo" / "main", other)
    rows = other / "test.jsonl"
    rows.write_text(rows.read_text(encoding="utf-8").replace("question", "QUESTION"), "utf-8")
    write(project.root / "ci" / "ci.ini", "[pytest]\nevaltasks_data = ../tasks/data\n")
    config = (option, str(project.root / "ci" / "ci.ini"))
    commit_recorded(project, *config, "--rootdir", str(project.root))
    write(project.root / "ci" / "ci.ini", "[pytest]\nevaltasks_data = ../other_data\n")
    assert_full_and_changed_fail(project, "configured|0", *config, "--rootdir", str(project.root))
    assert "ci/ci.ini changed (it configures the run)" in header(
        project, *config, "--rootdir", str(project.root)
    )


NATIVE_READS = {
    "pandas.read_parquet": (
        "import os, pandas\n"
        "PREFIX = pandas.read_parquet(os.path.join(os.path.dirname(__file__), 'res', "
        "'s.parquet'))['p'][0]"
    ),
    "pyarrow.parquet": (
        "import os, pyarrow.parquet\n"
        "PREFIX = pyarrow.parquet.read_table(os.path.join(os.path.dirname(__file__), 'res', "
        "'s.parquet')).column('p')[0].as_py()"
    ),
    "a reader behind a helper module": "from ._reader import PREFIX",
}


def write_parquet(path: Path, prefix: str) -> None:
    """A one-row parquet file, written in another interpreter (pandas registers its Arrow types
    once per process, and in-process runs drop and import it again)."""
    code = "import pandas, sys; pandas.DataFrame({'p': [sys.argv[2]]}).to_parquet(sys.argv[1])"
    subprocess.run([sys.executable, "-c", code, str(path), prefix], check=True)


@pytest.mark.subprocess
@pytest.mark.parametrize("reader", list(NATIVE_READS.values()), ids=list(NATIVE_READS))
def test_a_file_read_in_native_code(project: EvalProject, reader: str) -> None:
    """pandas hands a parquet path to pyarrow's C++ reader: no open is seen, so the file is
    claimed by no task, and its change checks every task."""
    pytest.importorskip("pandas")
    parquet = project.root / "tasks" / "res" / "s.parquet"
    parquet.parent.mkdir(parents=True)
    write_parquet(parquet, "Q:")
    write(project.root / "tasks" / "_reader.py", NATIVE_READS["pandas.read_parquet"] + "\n")
    task_module(project, "native", "prefix = PREFIX + ' '", imports=reader)
    task_module(project, "bystander", 'prefix = "B: "')
    commit_recorded(project)
    write_parquet(parquet, "Question:")
    assert "evaltasks::native|0" in selected(project)
    assert "no task claims (tasks/res/s.parquet)" in header(project)
    assert_full_and_changed_fail(project, "native|0")


STYLE_READERS = {
    "load_dataset, a path from the working folder": (
        "import datasets\n"
        "PREFIX = datasets.load_dataset('json', data_files='tasks/_style.jsonl', "
        "split='train')[0]['p']"
    ),
    "load_dataset, a path from __file__": (
        "import datasets, os\n"
        "STYLE = os.path.join(os.path.dirname(__file__), '_style.jsonl')\n"
        "PREFIX = datasets.load_dataset('json', data_files=STYLE, split='train')[0]['p']"
    ),
    "Dataset.from_json": (
        "import datasets, os\n"
        "STYLE = os.path.join(os.path.dirname(__file__), '_style.jsonl')\n"
        "PREFIX = datasets.Dataset.from_json(STYLE)[0]['p']"
    ),
}
STYLE_READER = STYLE_READERS["load_dataset, a path from the working folder"]


@pytest.mark.subprocess
@pytest.mark.parametrize("reader", list(STYLE_READERS.values()), ids=list(STYLE_READERS))
def test_a_file_a_module_loads_through_datasets_with_a_warm_cache(
    project: EvalProject, reader: str
) -> None:
    """After any earlier run, `datasets` would answer from its cache without opening the file:
    the cache a module's import goes through is private to it, so the file is read and
    claimed whatever the cache holds, by every module that loads it."""
    write(project.root / "tasks" / "_style.jsonl", '{"p": "Q:"}\n')
    for name in ("styled", "also_styled"):
        task_module(project, name, "prefix = PREFIX + ' '", imports=reader)
    task_module(project, "bystander", 'prefix = "B: "')
    (project.root / "tasks" / "demo.py").unlink()
    git(project.root, "init", "-q", "-b", "main")
    project.run("--evaltasks", "all", "--snapshot-update")  # the cache is warm from here on
    commit_recorded(project)
    for snapshot in project.snapshot_dir.glob("*styled-0--*.txt"):
        assert "\ntasks/_style.jsonl\n" in snapshot.read_text(encoding="utf-8")
    write(project.root / "tasks" / "_style.jsonl", '{"p": "Question:"}\n')
    assert sorted(selected(project)) == ["evaltasks::also_styled|0", "evaltasks::styled|0"]
    assert_full_and_changed_fail(project, "styled|0")


IMAGE_TASK = """\
import os
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HERE = os.path.dirname(__file__)


def prompt(row, task_name):
    return Doc(query="Q: " + row["q"], choices=[" yes", " no"], gold_index=row["label"],
               images=[{image}])


TASKS_TABLE = [LightevalTaskConfig(name="pictured", prompt_function=prompt, hf_repo="demo",
               hf_subset="main", metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
               few_shots_split="train")]
"""


@pytest.mark.parametrize(
    "image",
    [
        "os.path.join(HERE, 'img', str(row['label']) + '.png')",
        "{'path': os.path.join(HERE, 'img', str(row['label']) + '.png')}",
    ],
    ids=["a path", "a datasets image dict"],
)
def test_an_image_this_package_reads_for_a_doc(project: EvalProject, image: str) -> None:
    """A doc's image is read as it is fingerprinted, by this package: recorded all the same."""
    write(project.root / "tasks" / "pictured.py", IMAGE_TASK.format(image=image))
    for label in (0, 1):
        (project.root / "tasks" / "img").mkdir(exist_ok=True)
        (project.root / "tasks" / "img" / f"{label}.png").write_bytes(b"PNG" + bytes([label]))
    task_module(project, "bystander", 'prefix = "B: "')
    commit_recorded(project)
    snapshot = next(project.snapshot_dir.glob("pictured-0--*.txt")).read_text(encoding="utf-8")
    assert "\ntasks/img/1.png\n" in snapshot
    (project.root / "tasks" / "img" / "1.png").write_bytes(b"PNG, another picture")
    assert selected(project) == ["evaltasks::pictured|0"]
    assert_full_and_changed_fail(project, "pictured|0")


@pytest.mark.parametrize(
    ("named", "edited"),
    [
        ("tok", "chat_template.jinja"),
        ("tok/tokenizer_config.json", "chat_template.jinja"),
        ("tok", "tokenizer_config.json"),
        ("tok/template.jinja", "tokenizer_config.json"),
    ],
)
def test_a_chat_template_resolved_beside_the_file_named(
    project: EvalProject, named: str, edited: str
) -> None:
    """A tokenizer folder's template lives in `chat_template.jinja` beside its config, and a
    `.jinja` file takes its tokens from the config beside it: every file the resolution reads
    configures the run."""
    task_module(project, "chatty", 'prefix = "Q: "')
    tok = project.root / "tok"
    template = "{% for m in messages %}{{ bos_token }}<{{ m.role }}>{{ m.content }}{% endfor %}"
    write(tok / "tokenizer_config.json", '{"bos_token": "<s>"}')
    write(tok / "chat_template.jinja", template)
    write(tok / "template.jinja", template)
    write(project.root / "pytest.ini", f"[pytest]\nevaltasks_chat_template = {named}\n")
    commit_recorded(project)
    if edited == "tokenizer_config.json":
        write(tok / edited, '{"bos_token": "<BOS>"}')
    else:
        write(tok / edited, template.replace("<{{ m.role }}>", "[{{ m.role }}]"))
    assert f"tok/{edited} changed (it configures the run)" in header(project)
    assert_full_and_changed_fail(project, "chatty|0")


LAZY = """\
import os
_PREFIX = []


def _prefix():
    if not _PREFIX:
        with open(os.path.join(os.path.dirname(__file__), "assets", "lazy_prefix.txt")) as f:
            _PREFIX.append(f.read())
    return _PREFIX[0]
"""


@pytest.mark.parametrize("recorded", ["all", "lazy", "lazy_sibling"])
def test_a_file_a_prompt_function_reads_on_its_first_call(
    project: EvalProject, recorded: str
) -> None:
    """Read once, on the first call of the prompt function, and cached for every later call
    (of the same task or of a sibling): every record of the module holds it the first time it
    is written, however the tasks were recorded, and the next check passes."""
    write(project.root / "tasks" / "assets" / "lazy_prefix.txt", "Q: ")
    module = task_module(project, "lazy", "prefix = _prefix()", imports=LAZY)
    text = module.read_text(encoding="utf-8")
    sibling = text[text.index("TASKS_TABLE = [") + len("TASKS_TABLE = [") : text.rindex("]")]
    module.write_text(
        text[: text.rindex("]")]
        + ", "
        + sibling.replace('name="lazy"', 'name="lazy_sibling"')
        + "]\n",
        encoding="utf-8",
    )
    task_module(project, "bystander", 'prefix = "B: "')
    (project.root / "tasks" / "demo.py").unlink()
    git(project.root, "init", "-q", "-b", "main")
    spec = "all" if recorded == "all" else f"{recorded},bystander"
    if recorded != "all":
        other = "lazy_sibling" if recorded == "lazy" else "lazy"
        assert project.run("--evaltasks", other, "--snapshot-update").ret == 0
    assert project.run("--evaltasks", spec, "--snapshot-update").ret == 0
    for snapshot in project.snapshot_dir.glob("lazy*.txt"):
        assert "\ntasks/assets/lazy_prefix.txt\n" in snapshot.read_text(encoding="utf-8")
    git(project.root, "add", "-A")
    git(project.root, "commit", "-qm", "recorded")
    for run in ("lazy_sibling", "lazy", "all"):
        checked = project.run("--evaltasks", run)
        assert checked.ret == 0, checked.stdout.str()
    write(project.root / "tasks" / "assets" / "lazy_prefix.txt", "Question: ")
    assert sorted(selected(project)) == ["evaltasks::lazy_sibling|0", "evaltasks::lazy|0"]
    assert_full_and_changed_fail(project, "lazy|0")


SIBLINGS = """\
import os
from pytest_evaltasks import Doc, LightevalTaskConfig, Metrics

HERE = os.path.dirname(__file__)


def make(name):
    def prompt(row, task_name):
        with open(os.path.join(HERE, "assets", name + ".txt")) as stream:
            prefix = stream.read()
        return Doc(query=prefix + row["q"], choices=[" yes", " no"], gold_index=row["label"])

    return prompt


TASKS_TABLE = [LightevalTaskConfig(name=name, prompt_function=make(name), hf_repo="demo",
               hf_subset="main", metrics=[Metrics.loglikelihood_acc], evaluation_splits=["test"],
               few_shots_split="train") for name in ("first", "second")]
"""


def test_a_record_holds_whichever_sibling_was_built_before(project: EvalProject) -> None:
    """Two tasks of one module read a file each at call time: a record made after the sibling
    was built (which may count the sibling's file too) is checked by a run that builds the
    task alone, and the other way round."""
    (project.root / "tasks" / "demo.py").unlink()
    write(project.root / "tasks" / "siblings.py", SIBLINGS)
    write(project.root / "tasks" / "assets" / "first.txt", "A: ")
    write(project.root / "tasks" / "assets" / "second.txt", "B: ")
    assert project.run("--evaltasks", "all", "--snapshot-update").ret == 0
    for spec in ("second", "first", "second,first", "all"):
        checked = project.run("--evaltasks", spec)
        assert checked.ret == 0, checked.stdout.str()
    for spec in ("second", "first"):
        assert project.run("--evaltasks", spec, "--snapshot-update").ret == 0
        assert project.run("--evaltasks", "all").ret == 0


def test_a_read_missing_from_a_record_fails_the_check(project: EvalProject) -> None:
    """A record must hold what the build reads: a file read now that its snapshot does not
    list fails the check (changed-only runs would miss it), and an update records it."""
    write(project.root / "tasks" / "assets" / "prefix.txt", "Q: ")
    module = task_module(project, "reader", 'prefix = "Q: "')
    commit_recorded(project)
    module.write_text(
        module.read_text(encoding="utf-8").replace(
            'prefix = "Q: "',
            'prefix = open(__file__.replace("reader.py", "assets/prefix.txt")).read()',
        ),
        encoding="utf-8",
    )
    checked = project.run("--evaltasks", "all")
    assert "now reads tasks/assets/prefix.txt, which its snapshot does not record" in (
        checked.stdout.str()
    )
    assert project.run("--evaltasks", "all", "--snapshot-update").ret == 0
    assert project.run("--evaltasks", "all").ret == 0


JUDGE = """\
import os, tempfile


class Judge:
    def __init__(self):
        self.cache = os.path.expanduser("~/.cache/judge")
        self.scratch = tempfile.gettempdir()
        self.command = "judge --cache " + os.path.expanduser("~/.cache/judge") + " --fast"
        self.interpreter = __import__("sys").prefix

    def __call__(self, *args):
        return 0


JUDGE = Judge()
"""


@pytest.mark.subprocess
def test_a_metric_holding_machine_paths_holds_on_another_machine(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A metric keeps the home, the cache and the temporary folder, alone and inside a longer
    string: the record names them by their variables, the same under any HOME and TMPDIR."""
    module = task_module(project, "judged", 'prefix = "Q: "', imports=JUDGE)
    text = module.read_text(encoding="utf-8")
    metrics = ("Metrics.loglikelihood_acc]", "Metrics.loglikelihood_acc, JUDGE]")
    module.write_text(text.replace(*metrics), encoding="utf-8")
    commit_recorded(project)
    snapshot = next(project.snapshot_dir.glob("judged-0--*.txt")).read_bytes()
    elsewhere = tmp_path_factory.mktemp("machine")
    for folder in ("home", "tmp"):
        (elsewhere / folder).mkdir()
    project.pytester._monkeypatch.setenv("HOME", str(elsewhere / "home"))
    project.pytester._monkeypatch.setenv("TMPDIR", str(elsewhere / "tmp"))
    checked = project.run("--evaltasks", "all", "--evaltasks-base=main")
    assert checked.ret == 0, checked.stdout.str()
    assert project.run("--evaltasks", "all", "--snapshot-update").ret == 0
    assert next(project.snapshot_dir.glob("judged-0--*.txt")).read_bytes() == snapshot


@pytest.mark.subprocess
def test_a_record_made_with_a_warm_cache_holds_in_a_fresh_clone(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Recorded warm, checked cold in another clone (and the other way round): the same."""
    write(project.root / "tasks" / "_style.jsonl", '{"p": "Q:"}\n')
    task_module(project, "styled", "prefix = PREFIX + ' '", imports=STYLE_READER)
    (project.root / "tasks" / "demo.py").unlink()
    git(project.root, "init", "-q", "-b", "main")
    project.run("--evaltasks", "all", "--snapshot-update")
    commit_recorded(project)  # recorded with the cache warm
    clone = tmp_path_factory.mktemp("clone") / "project"
    git(project.root, "clone", "-q", str(project.root), str(clone))
    cache = tmp_path_factory.mktemp("cold-cache")
    project.pytester._monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    os.chdir(clone)
    checked = project.pytester.runpytest_subprocess(
        "-p", "no:randomly", "--evaltasks", "all", "--rootdir", str(clone)
    )
    assert checked.ret == 0, checked.stdout.str()
    rewritten = project.pytester.runpytest_subprocess(
        "-p", "no:randomly", "--evaltasks", "all", "--snapshot-update", "--rootdir", str(clone)
    )
    assert rewritten.ret == 0
    assert git(clone, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_new_file_beside_the_tasks_widens_and_says_how_to_narrow(project: EvalProject) -> None:
    """A file no record claims could be read where no open is seen: every task is checked,
    and the header names the file and the ini key that declares it irrelevant."""
    task_module(project, "one", 'prefix = "Q: "')
    task_module(project, "two", 'prefix = "O: "')
    commit_recorded(project)
    write(project.root / "tasks" / "notes.txt", "anything")
    assert selected(project) == ["evaltasks::one|0", "evaltasks::two|0"]
    said = header(project)
    assert "1 changed file no task claims (tasks/notes.txt)" in said
    assert "declare files that cannot affect any prompt in evaltasks_changed_ignore" in said
    write(project.root / "pytest.ini", "[pytest]\nevaltasks_changed_ignore = tasks/notes.txt\n")
    git(project.root, "add", "pytest.ini")
    git(project.root, "commit", "-qm", "ignore the notes")
    assert selected(project) == []
    assert "tasks/notes.txt changed, ignored by evaltasks_changed_ignore" in header(project)


def test_a_bad_ignore_pattern_is_a_usage_error(project: EvalProject) -> None:
    write(project.root / "pytest.ini", "[pytest]\nevaltasks_changed_ignore = !README.md\n")
    result = project.run("--evaltasks", "all")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evaltasks_changed_ignore (ini): '!README.md'*not supported*"])


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "prefix",
    ["tempfile.gettempdir() + ': '", "os.path.expanduser('~/notes') + ': '"],
    ids=["the temporary folder", "the home folder"],
)
def test_a_prompt_that_names_a_machine_path_is_never_blamed_on_the_version(
    project: EvalProject, prefix: str
) -> None:
    """Prompt text is recorded as written, so a prompt naming a machine's folder differs on
    every machine: it is refused as nondeterministic, never recorded, never "bump"."""
    task_module(project, "machine", f"prefix = {prefix}", imports="import os, tempfile")
    task_module(project, "steady", 'prefix = "Q: "')
    (project.root / "tasks" / "demo.py").unlink()
    updated = project.run("--evaltasks", "all", "--snapshot-update")
    assert updated.ret == 1
    updated.stdout.fnmatch_lines(["*machine|0: nondeterministic prompt function: its prompts "
                                  "depend on the machine*"])  # fmt: skip
    assert "bump" not in project.failures(updated)
    assert [path.name.split("-")[0] for path in project.snapshot_dir.iterdir()] == ["steady"]


@pytest.mark.subprocess
def test_a_run_leaves_nothing_in_the_temporary_folder(
    project: EvalProject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Private caches, fresh processes (killed when the run ends), another machine's folders:
    all in the run's own temporary folder, removed when the run ends."""
    temporary = tmp_path_factory.mktemp("tmp")
    project.pytester._monkeypatch.setenv("TMPDIR", str(temporary))
    write(project.root / "tasks" / "_style.jsonl", '{"p": "Q:"}\n')
    task_module(project, "styled", "prefix = PREFIX + ' '", imports=STYLE_READER)
    assert project.run("--evaltasks", "all", "--snapshot-update").ret == 0
    project.write_tasks(edited=(1,))  # a change: confirmed in fresh processes
    assert project.run("--evaltasks", "all", "-n", "2").ret == 1
    assert sorted(path.name for path in temporary.iterdir()) == []
