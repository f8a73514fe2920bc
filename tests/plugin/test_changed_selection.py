"""`--evaltasks-changed` never skips a task whose prompts changed: each way a task's inputs were
seen to escape the selection, replayed end to end in a throwaway git repository.

Each case records and commits a project, changes something the task reads, and checks that
`--evaltasks all` fails (the prompts did change) and that the changed-only run selects the task.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from git_project import (
    TASK,
    assert_caught,
    commit_recorded,
    git,
    header,
    selected,
    task_module,
    write,
)

if TYPE_CHECKING:
    from conftest import EvalProject

pytestmark = pytest.mark.slow  # CI runs it; the quick start leaves it out (-m "not slow")


def test_a_helper_imported_inside_the_prompt_function(project: EvalProject) -> None:
    write(project.root / "tasks" / "_lazy.py", 'PREFIX = "Q: "\n')
    task_module(project, "lazy", "from ._lazy import PREFIX as prefix")
    task_module(project, "other", 'prefix = "O: "')
    commit_recorded(project)
    write(project.root / "tasks" / "_lazy.py", 'PREFIX = "Question: "\n')
    assert_caught(project, "lazy|0")
    assert "evaltasks::other|0" not in selected(project)


def test_importlib_import_module_relative(project: EvalProject) -> None:
    write(project.root / "tasks" / "_dyn.py", 'PREFIX = "Q: "\n')
    task_module(
        project,
        "dyn",
        'prefix = importlib.import_module("._dyn", __package__).PREFIX',
        imports="import importlib",
    )
    commit_recorded(project)
    write(project.root / "tasks" / "_dyn.py", 'PREFIX = "Question: "\n')
    assert_caught(project, "dyn|0")


def test_a_bare_dunder_import_with_a_fromlist(project: EvalProject) -> None:
    write(project.root / "tasks" / "_bare.py", 'PREFIX = "Q: "\n')
    task_module(
        project,
        "bare",
        'prefix = __import__(__package__ + "._bare", fromlist=["PREFIX"]).PREFIX',
    )
    commit_recorded(project)
    write(project.root / "tasks" / "_bare.py", 'PREFIX = "Question: "\n')
    assert_caught(project, "bare|0")


@pytest.mark.parametrize("when", ["import", "call"])
def test_a_template_file_read_by_the_task(project: EvalProject, when: str) -> None:
    template = project.root / "tasks" / "templates" / "template.json"
    write(template, '{"prefix": "Q: "}\n')
    load = 'json.loads((pathlib.Path(__file__).parent / "templates" / "template.json").read_text())'
    if when == "import":
        task_module(
            project,
            "templated",
            'prefix = TEMPLATE["prefix"]',
            imports=f"import json, pathlib\nTEMPLATE = {load}",
        )
    else:
        task_module(
            project, "templated", f'prefix = {load}["prefix"]', imports="import json, pathlib"
        )
    commit_recorded(project)
    write(template, '{"prefix": "Question: "}\n')
    assert_caught(project, "templated|0")


@pytest.mark.parametrize(
    ("when", "listing"),
    [
        ("import", "sorted(FOLDER.glob('*.txt'))"),
        ("call", "sorted(FOLDER.iterdir())"),
        ("call", "sorted(FOLDER / name for name in os.listdir(FOLDER))"),
        ("import", "sorted(pathlib.Path(d, f) for d, _, fs in os.walk(FOLDER) for f in fs)"),
    ],
)
def test_a_folder_the_task_lists(project: EvalProject, when: str, listing: str) -> None:
    """The prompt joins every file of a folder: a file added there changes the prompts, though
    no file the task opened changed."""
    folder = project.root / "tasks" / "parts"
    write(folder / "a.txt", "Q")
    join = f'"".join(path.read_text() for path in {listing}) + ": "'
    imports = 'import os, pathlib\nFOLDER = pathlib.Path(__file__).parent / "parts"'
    if when == "import":
        task_module(project, "listed", "prefix = PREFIX", imports=f"{imports}\nPREFIX = {join}")
    else:
        task_module(project, "listed", f"prefix = {join}", imports=imports)
    task_module(project, "other", 'prefix = "O: "')
    commit_recorded(project)
    write(folder / "b.txt", "uestion")
    assert_caught(project, "listed|0")
    assert "evaltasks::other|0" not in selected(project)


def test_a_helper_that_conftest_imported_first(project: EvalProject) -> None:
    """conftest.py loads the helper package before the plugin imports any task module, so the
    helper's own imports and file reads happen before any recording began."""
    write(project.root / "helpers" / "__init__.py", "")
    write(project.root / "helpers" / "words.py", "from .deep import PREFIX\n")
    write(project.root / "helpers" / "deep.py", 'PREFIX = open(__file__[:-7] + "p.txt").read()\n')
    write(project.root / "helpers" / "p.txt", "Q: ")
    write(
        project.root / "conftest.py",
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\nimport helpers.words\n",
    )
    task_module(project, "preloaded", "from helpers.words import PREFIX as prefix")
    commit_recorded(project)
    git(project.root, "rm", "-q", "--cached", "conftest.py")  # conftest unchanged below
    git(project.root, "commit", "-qm", "conftest untracked")
    write(project.root / "helpers" / "p.txt", "Question: ")
    assert_caught(project, "preloaded|0")
    write(project.root / "helpers" / "p.txt", "Q: ")
    write(project.root / "helpers" / "deep.py", 'PREFIX = "Question: "\n')
    assert_caught(project, "preloaded|0")


@pytest.mark.subprocess
def test_a_file_that_conftest_read_is_recorded_from_a_fresh_start(project: EvalProject) -> None:
    """A fresh pytest process that asks for tasks observes file opens from before its first
    `conftest.py` is imported: the template a preloaded helper read is a recorded input (a
    process that observed nothing yet would miss it)."""
    write(project.root / "helpers" / "__init__.py", "")
    write(project.root / "helpers" / "words.py", 'PREFIX = open(__file__[:-8] + "p.txt").read()\n')
    write(project.root / "helpers" / "p.txt", "Q: ")
    write(
        project.root / "conftest.py",
        "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\nimport helpers.words\n",
    )
    task_module(project, "preloaded", "from helpers.words import PREFIX as prefix")
    (project.root / "tasks" / "demo.py").unlink()
    assert project.run("--evaltasks", "preloaded", "--snapshot-update").ret == 0
    (snapshot,) = (project.root / "tasks" / "__snapshots__").glob("preloaded-*.txt")
    inputs = snapshot.read_text(encoding="utf-8").split("[inputs]\n")[1].split("\n\n")[0]
    assert {"helpers/p.txt", "helpers/words.py", "tasks/preloaded.py"} <= set(inputs.split("\n"))


def test_a_helper_in_a_git_submodule(project: EvalProject, tmp_path: Path) -> None:
    library = tmp_path / "library"
    write(library / "wording.py", 'PREFIX = "Q: "\n')
    git(library, "init", "-q", "-b", "main")
    git(library, "add", "-A")
    git(library, "commit", "-qm", "library")
    git(project.root, "init", "-q", "-b", "main")
    git(project.root, "submodule", "add", "-q", str(library), "vendor/library")
    write(
        project.root / "conftest.py",
        "import sys, os\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'vendor', 'library'))\n",
    )
    task_module(project, "vendored", "from wording import PREFIX as prefix")
    commit_recorded(project)
    git(project.root, "rm", "-q", "--cached", "conftest.py")
    git(project.root, "commit", "-qm", "conftest untracked")
    write(project.root / "vendor" / "library" / "wording.py", 'PREFIX = "Question: "\n')
    assert_caught(project, "vendored|0")


def test_json_data_files_inside_the_project(project: EvalProject) -> None:
    files = project.root / "evaldata"
    write(files / "test.jsonl", '{"q": "a", "label": 0}\n{"q": "b", "label": 1}\n')
    task_module(
        project,
        "jsonfiles",
        'prefix = "Q: "',
        extra=',\n               hf_data_files={"test": DATA + "/test.jsonl"}',
        imports="import os\n"
        'DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "evaldata")',
    )
    text = (project.root / "tasks" / "jsonfiles.py").read_text()
    (project.root / "tasks" / "jsonfiles.py").write_text(
        text.replace(
            'hf_repo="demo",\n               hf_subset="main"', 'hf_repo="json", hf_subset=None'
        )
    )
    commit_recorded(project)
    write(files / "test.jsonl", '{"q": "a", "label": 0}\n{"q": "CHANGED", "label": 1}\n')
    assert_caught(project, "jsonfiles|0")


@pytest.mark.parametrize(
    "pattern", ['DATA + "/*.jsonl"', '"evaldata/*.jsonl"', '"evaldata/**/*.jsonl"']
)
def test_a_file_added_that_matches_a_data_files_glob(project: EvalProject, pattern: str) -> None:
    """Rows named by a glob (from `__file__`, relative, recursive): the folder it lists is an
    input, so a new file that matches selects the task, with a warm datasets cache or not."""
    files = project.root / "evaldata"
    write(files / "a.jsonl", '{"q": "a", "label": 0}\n')
    task_module(
        project,
        "globbed",
        'prefix = "Q: "',
        extra=f',\n               hf_data_files={{"test": {pattern}}}',
        imports="import os\n"
        'DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "evaldata")',
    )
    text = (project.root / "tasks" / "globbed.py").read_text()
    (project.root / "tasks" / "globbed.py").write_text(
        text.replace(
            'hf_repo="demo",\n               hf_subset="main"', 'hf_repo="json", hf_subset=None'
        )
    )
    commit_recorded(project)
    write(files / "b.jsonl", '{"q": "b", "label": 1}\n')
    assert_caught(project, "globbed|0")


UNSEEN_READS = {
    "a subprocess": (
        "import os, subprocess\n"
        'WORDS = os.path.join(os.path.dirname(__file__), "..", "words.csv")\n'
        'PREFIX = subprocess.run(["cat", WORDS], capture_output=True, text=True).stdout'
        ".split()[-1]"
    ),
    "a process pool's worker": (
        "import multiprocessing, os\n"
        'WORDS = os.path.join(os.path.dirname(__file__), "..", "words.csv")\n'
        "def read(path):\n"
        "    with open(path) as stream:\n"
        "        return stream.read().split()[-1]\n"
        'with multiprocessing.get_context("fork").Pool(1) as pool:\n'
        "    PREFIX = pool.apply(read, (WORDS,))"
    ),
    "pandas": (
        "import os, pandas\n"
        'WORDS = os.path.join(os.path.dirname(__file__), "..", "words.csv")\n'
        'PREFIX = str(pandas.read_csv(WORDS)["p"][0])'
    ),
    "pyarrow, declared": (
        "import os, pyarrow.csv\n"
        'WORDS = os.path.join(os.path.dirname(__file__), "..", "words.csv")\n'
        'PREFIX = pyarrow.csv.read_csv(WORDS).column("p")[0].as_py()\n'
        'evaltasks_inputs = ["../words.csv"]'
    ),
    "pyarrow, undeclared": (
        "import os, pyarrow.csv\n"
        'WORDS = os.path.join(os.path.dirname(__file__), "..", "words.csv")\n'
        'PREFIX = pyarrow.csv.read_csv(WORDS).column("p")[0].as_py()'
    ),
    "importlib.resources": (
        "import importlib.resources\n"
        'PREFIX = importlib.resources.files(__package__).joinpath("words.txt").read_text()'
    ),
}


@pytest.mark.subprocess  # a fork of a fresh interpreter, as a user's run has
@pytest.mark.parametrize("reader", list(UNSEEN_READS.values()), ids=list(UNSEEN_READS))
def test_a_project_file_read_where_opens_are_not_seen(project: EvalProject, reader: str) -> None:
    """Read through another process, a native reader (declared by `evaltasks_inputs`, or not:
    then the task is always selected), pandas or `importlib.resources`: a change to the file
    still selects the task (another process: the task is always selected, its reads cannot be
    known)."""
    write(project.root / "words.csv", "p\nQ:\n")
    write(project.root / "tasks" / "words.txt", "Q: ")
    task_module(project, "unseen", "prefix = PREFIX + ' '", imports=reader)
    commit_recorded(project)
    write(project.root / "words.csv", "p\nQuestion:\n")
    write(project.root / "tasks" / "words.txt", "Question: ")
    assert_caught(project, "unseen|0")


def test_a_native_reader_s_file_selects_every_task_unless_declared(project: EvalProject) -> None:
    """A file read where no open is seen is claimed by no task: its change checks every task,
    saying why; declared in `evaltasks_inputs`, it selects the tasks that declare it."""
    write(project.root / "words.csv", "p\nQ:\n")
    write(project.root / "other.csv", "p\nQ:\n")
    reader = UNSEEN_READS["pyarrow, undeclared"]
    task_module(project, "undeclared", "prefix = PREFIX + ' '", imports=reader)
    task_module(
        project, "declared", "prefix = PREFIX + ' '", imports=UNSEEN_READS["pyarrow, declared"]
    )
    task_module(project, "plain", 'prefix = "Q: "')
    commit_recorded(project)
    write(project.root / "other.csv", "p\nQuestion:\n")
    assert selected(project) == [
        "evaltasks::declared|0", "evaltasks::plain|0", "evaltasks::undeclared|0"
    ]  # fmt: skip
    assert "1 changed file no task claims (other.csv)" in header(project)
    git(project.root, "checkout", "-q", "--", ".")
    write(project.root / "words.csv", "p\nQuestion:\n")
    assert selected(project) == ["evaltasks::declared|0"]


def test_a_data_folder_that_is_a_tracked_symlink(project: EvalProject) -> None:
    real = project.root / "shared_data" / "demo" / "main"
    data = project.root / "tasks" / "data" / "demo" / "main"
    shutil.copytree(data, real)
    shutil.rmtree(project.root / "tasks" / "data" / "demo")
    os.symlink(
        os.path.relpath(project.root / "shared_data" / "demo", data.parent.parent),
        project.root / "tasks" / "data" / "demo",
    )
    task_module(project, "linked", 'prefix = "Q: "')
    commit_recorded(project)
    test = real / "test.jsonl"
    test.write_text(test.read_text().replace("question 0", "QUESTION 0"), encoding="utf-8")
    assert_caught(project, "linked|0")


def test_non_ascii_paths(project: EvalProject) -> None:
    write(project.root / "tasks" / "_ayuda_español.py", 'PREFIX = "P: "\n')
    task_module(
        project, "preguntas", "from ._ayuda_español import PREFIX as prefix", file="preguntás.py"
    )
    commit_recorded(project)
    write(project.root / "tasks" / "_ayuda_español.py", 'PREFIX = "Pregunta: "\n')
    assert_caught(project, "preguntas|0")
    git(project.root, "checkout", "-q", "--", ".")
    path = project.root / "tasks" / "preguntás.py"
    path.write_text(
        path.read_text(encoding="utf-8").replace("prefix + row", '"¿" + prefix + row'),
        encoding="utf-8",
    )
    assert_caught(project, "preguntas|0")


def test_a_monorepo_whose_helpers_live_beside_the_root(pytester: pytest.Pytester) -> None:
    repo = pytester.path
    evals = repo / "evals"
    write(repo / "libs" / "wording.py", 'PREFIX = "Q: "\n')
    write(evals / "pytest.ini", "[pytest]\n")
    write(
        evals / "conftest.py",
        "import sys, os\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'libs'))\n",
    )
    data = evals / "tasks" / "data" / "demo" / "main"
    for split, count in (("test", 4), ("train", 3)):
        write(
            data / f"{split}.jsonl",
            "".join(f'{{"q": "{split} {i}", "label": {i % 2}}}\n' for i in range(count)),
        )
    text = TASK.format(
        name="mono", imports="from wording import PREFIX", body="    prefix = PREFIX", extra=""
    )
    write(evals / "tasks" / "mono.py", text)
    git(repo, "init", "-q", "-b", "main")

    def run(*args: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(
            "-p", "no:randomly", "--rootdir", str(evals), "-c", str(evals / "pytest.ini"), *args
        )

    os.chdir(evals)
    run("--evaltasks", "all", "--snapshot-update").assert_outcomes(passed=1)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recorded")
    write(repo / "libs" / "wording.py", 'PREFIX = "Question: "\n')
    collected = run("--evaltasks-changed=main", "--collect-only", "-q")
    assert "evaltasks::mono|0" in collected.stdout.str()


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("pytest.ini", "[pytest]\nevaltasks_data = tasks/data\n", "configur"),
        ("tox.ini", "[tox]\n", "configur"),
        # pytest 9 reads these before pytest.ini: a setting changed there shapes every task
        ("pytest.toml", '[pytest]\nevaltasks_docs = "2"\n', "configur"),
        (".pytest.toml", '[pytest]\nevaltasks_docs = "2"\n', "configur"),
        ("sub/conftest.py", "", "conftest.py: it configures"),
        # claimed by no task: nothing shows they cannot change a prompt
        ("requirements.txt", "lighteval==0.13.1\n", "no task claims"),
        # an eol rule changes the bytes a fresh checkout gives every task's files
        (".gitattributes", "*.jsonl text eol=crlf\n", "no task claims"),
    ],
)
def test_a_file_that_shapes_every_task(
    project: EvalProject, name: str, text: str, why: str
) -> None:
    task_module(project, "shaped", 'prefix = "Q: "')
    task_module(project, "other", 'prefix = "O: "')
    commit_recorded(project)
    write(project.root / name, text)
    assert selected(project) == ["evaltasks::other|0", "evaltasks::shaped|0"]
    assert why in header(project)


def test_a_configuration_file_or_a_claimed_file_is_never_ignored(project: EvalProject) -> None:
    """The ignore list hides only files no task claims and that do not configure the run."""
    write(project.root / "tasks" / "prefix.md", "Q: ")
    task_module(
        project,
        "claimed",
        "prefix = open(os.path.join(os.path.dirname(__file__), 'prefix.md')).read()",
        imports="import os",
    )
    task_module(project, "other", 'prefix = "O: "')
    ignore = "[pytest]\nevaltasks_changed_ignore =\n    *.md\n    *.ini\n"
    write(project.root / "pytest.ini", ignore)
    commit_recorded(project)
    write(project.root / "README.md", "words\n")
    assert selected(project) == []
    assert "README.md changed, ignored by evaltasks_changed_ignore" in header(project)
    write(project.root / "tasks" / "prefix.md", "Question: ")
    assert_caught(project, "claimed|0")
    assert selected(project) == ["evaltasks::claimed|0"]
    git(project.root, "checkout", "-q", "--", ".")
    write(project.root / "pytest.ini", "[pytest]\nevaltasks_changed_ignore = *.md\n")
    assert selected(project) == ["evaltasks::claimed|0", "evaltasks::other|0"]


def test_git_rm_of_a_snapshot_selects_its_task(project: EvalProject) -> None:
    task_module(project, "removed", 'prefix = "Q: "')
    commit_recorded(project)
    snapshot = next(project.snapshot_dir.glob("removed-0--*.txt"))
    git(project.root, "rm", "-q", str(snapshot))
    result = project.run("--evaltasks-changed=main", "--evaltasks-base=main")
    result.assert_outcomes(failed=1)
    assert "removed|0" in result.stdout.str()


def test_an_unchanged_tree_is_green_and_says_so(project: EvalProject) -> None:
    task_module(project, "quiet", 'prefix = "Q: "')
    commit_recorded(project)
    report = project.root / "report.md"
    result = project.run(
        "--evaltasks", "all", "--evaltasks-changed=main", f"--evaltasks-report={report}"
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*0 tasks changed since main: nothing to check*"])


def test_the_default_ref_is_the_default_branch_not_the_branch_itself(
    project: EvalProject, tmp_path: Path
) -> None:
    task_module(project, "pushed", 'prefix = "Q: "')
    commit_recorded(project)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(project.root, "remote", "add", "origin", str(origin))
    git(project.root, "push", "-q", "origin", "main")
    git(project.root, "checkout", "-q", "-b", "feature")
    path = project.root / "tasks" / "pushed.py"
    path.write_text(path.read_text().replace('"Q: "', '"Question: "'), encoding="utf-8")
    git(project.root, "commit", "-qam", "unversioned change, committed")
    git(project.root, "push", "-q", "-u", "origin", "feature")  # it tracks its own pushed tip
    collected = project.run("--evaltasks-changed", "--collect-only", "-q")
    assert "evaltasks::pushed|0" in collected.stdout.str()


def test_in_ci_without_a_default_branch_the_ref_must_be_given(
    project: EvalProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    task_module(project, "detached", 'prefix = "Q: "')
    commit_recorded(project)
    git(project.root, "branch", "-q", "-m", "topic")
    git(project.root, "checkout", "-q", "--detach")
    monkeypatch.setenv("CI", "true")
    result = project.run("--evaltasks-changed", "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--evaltasks-changed: no default branch*--evaltasks-changed=REF*"]
    )
