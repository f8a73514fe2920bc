"""Task discovery and task-string resolution (prompt step 1): modules, collisions.

The steps are those of docs/differences-from-lighteval.md."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_evaltasks import Registry, Task
from pytest_evaltasks.errors import EvalTaskError, RegistryError, TaskStringError

HEADER = """\
from pytest_evaltasks import Doc, LightevalTaskConfig


def prompt(line, task_name):
    return Doc(query=line["q"], choices=[" a", " b"], gold_index=0)


def cfg(name, **kw):
    return LightevalTaskConfig(
        name=name, prompt_function=prompt, hf_repo="org/ds", hf_subset="default",
        metrics=["acc"], **kw
    )

"""


def task_module(*names: str, extra: str = "") -> str:
    """Source of a task module registering `names`."""
    table = ", ".join(f"cfg({name!r})" for name in names)
    return HEADER + extra + f"\nTASKS_TABLE = [{table}]\n"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    """A task directory with a family (mmlu:*), a lone prefixed task and plain tasks."""
    d = tmp_path / "tasks"
    write(d / "mmlu.py", task_module("mmlu:astronomy", "mmlu:anatomy", "mmlu:virology"))
    write(d / "misc.py", task_module("gsm8k", "solo:only", "arc:easy", "arc:challenge"))
    return d


# --- discovery -------------------------------------------------------------------------------


def test_every_module_and_subdirectory_main_is_discovered(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "a.py", task_module("task_a"))
    write(d / "b.py", task_module("task_b"))
    write(d / "__init__.py", task_module("from_init"))
    write(d / "family" / "main.py", task_module("family_task"))
    write(d / "family" / "other.py", task_module("not_main"))
    write(d / "nomain" / "module.py", task_module("no_main_here"))
    write(d / "deep" / "deeper" / "main.py", task_module("too_deep"))
    write(d / "notes.txt", "TASKS_TABLE = []")
    registry = Registry(task_dirs=[d])
    assert registry.names == ["family_task", "task_a", "task_b"]
    assert registry.broken == []
    assert registry.origins["family_task"] == d / "family" / "main.py"
    assert registry.origins["task_a"] == d / "a.py"


def test_module_without_tasks_table_registers_nothing(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "helpers.py", "X = 1\n")
    write(d / "t.py", task_module("t"))
    registry = Registry(task_dirs=[d])
    assert registry.names == ["t"]
    assert registry.broken == []


def test_several_task_directories(tmp_path: Path) -> None:
    write(tmp_path / "one" / "x.py", task_module("one_task"))
    write(tmp_path / "two" / "x.py", task_module("two_task"))
    registry = Registry(task_dirs=[tmp_path / "one", tmp_path / "two"])
    assert registry.names == ["one_task", "two_task"]


def test_missing_task_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="does not exist"):
        Registry(task_dirs=[tmp_path / "nope"])


def test_custom_task_files_are_loaded(tmp_path: Path, tasks_dir: Path) -> None:
    custom = write(tmp_path / "elsewhere" / "my_tasks.py", task_module("custom_one", "custom_two"))
    registry = Registry(task_dirs=[tasks_dir], custom_tasks=[custom])
    assert {"custom_one", "custom_two"} <= set(registry.names)
    assert registry.origins["custom_one"] == custom
    assert registry.load("custom_two|2")[0].full_name == "custom_two|2"


def test_missing_custom_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match=r"nothing\.py"):
        Registry(task_dirs=[], custom_tasks=[tmp_path / "nothing.py"])


def test_relative_import_inside_a_task_directory(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "shared_prompts.py", "SUFFIX = '!'\n")
    write(
        d / "uses_helper.py",
        task_module("rel_file", extra="from .shared_prompts import SUFFIX\nNAME = 'x' + SUFFIX\n"),
    )
    write(d / "pkg" / "util.py", "VALUE = 42\n")
    write(d / "pkg" / "main.py", task_module("rel_sub", extra="from .util import VALUE\n"))
    registry = Registry(task_dirs=[d])
    assert registry.broken == []
    assert registry.names == ["rel_file", "rel_sub"]


def test_module_and_subdirectory_with_the_same_name(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "family.py", task_module("from_file"))
    write(d / "family" / "util.py", "VALUE = 1\n")
    write(d / "family" / "main.py", task_module("from_dir", extra="from .util import VALUE\n"))
    registry = Registry(task_dirs=[d])
    assert [module.describe() for module in registry.broken] == []
    assert registry.names == ["from_dir", "from_file"]


def test_task_file_named_like_a_stdlib_module_does_not_shadow_it(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "json.py", task_module("json_task"))
    write(d / "random.py", task_module("random_task"))
    write(
        d / "user.py",
        task_module(
            "user_task",
            extra="import json\nimport random\nDUMPED = json.dumps({'a': 1})\n"
            "assert hasattr(random, 'Random')\n",
        ),
    )
    registry = Registry(task_dirs=[d])
    assert registry.broken == []
    assert registry.names == ["json_task", "random_task", "user_task"]
    assert sys.modules["json"] is json
    assert json.dumps([1]) == "[1]"
    assert "tasks" not in str(Path(json.__file__).parent)


def test_two_registries_on_separate_directories_do_not_mix(tmp_path: Path) -> None:
    """Same file names in two directories: each registry sees its own modules."""
    write(tmp_path / "a" / "tasks.py", task_module("from_a"))
    write(tmp_path / "b" / "tasks.py", task_module("from_b"))
    assert Registry(task_dirs=[tmp_path / "a"]).names == ["from_a"]
    assert Registry(task_dirs=[tmp_path / "b"]).names == ["from_b"]


def test_edited_task_file_is_read_again(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "t.py", task_module("before"))
    assert Registry(task_dirs=[d]).names == ["before"]
    write(d / "t.py", task_module("after"))
    assert Registry(task_dirs=[d]).names == ["after"]


def test_source_file_and_line_point_at_the_task_file(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(
        d / "located.py",
        """\
        from pytest_evaltasks import Doc, LightevalTaskConfig, LightevalTaskConfig as LTC


        def prompt(line, task_name):
            return Doc(query="q", choices=["a"], gold_index=0)


        first = LightevalTaskConfig(
            name="first",
            prompt_function=prompt,
            hf_repo="r",
            hf_subset="s",
            metrics=[],
        )
        second = LTC(name="second", prompt_function=prompt, hf_repo="r", hf_subset="s", metrics=[])

        TASKS_TABLE = [first, second]
        """,
    )
    registry = Registry(task_dirs=[d])
    first, second = registry.configs["first"], registry.configs["second"]
    assert Path(first.source_file).resolve() == (d / "located.py").resolve()
    assert first.source_line == 8
    assert second.source_line == 15
    # the task's private copy keeps the location
    task = registry.load("second|1")[0]
    assert task.config.source_line == 15
    assert Path(task.config.source_file).resolve() == (d / "located.py").resolve()


# --- collisions ------------------------------------------------------------------------------


def _unusable_message(registry: Registry, name: str) -> str:
    """The error a request for `name` gives."""
    with pytest.raises(TaskStringError) as info:
        registry.resolve(name)
    return str(info.value)


def test_custom_task_colliding_with_builtin_names_both_files(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    builtin = write(d / "core.py", task_module("gsm8k", "other"))
    custom = write(tmp_path / "custom" / "mine.py", task_module("gsm8k"))
    registry = Registry(task_dirs=[d], custom_tasks=[custom])
    message = _unusable_message(registry, "gsm8k")
    assert "'gsm8k'" in message and "custom task" in message
    assert str(builtin) in message and str(custom) in message
    assert registry.names == ["other"]  # every other task stays usable


def test_two_builtin_modules_defining_one_name_names_both_files(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    first = write(d / "a_first.py", task_module("dup", "kept_a"))
    second = write(d / "b_second.py", task_module("dup", "kept_b"))
    registry = Registry(task_dirs=[d])
    message = _unusable_message(registry, "dup")
    assert "'dup'" in message
    assert str(first) in message and str(second) in message
    assert registry.names == ["kept_a", "kept_b"]
    assert sorted(registry.unusable["dup"].paths) == sorted([first, second])


def test_one_module_defining_a_name_twice_makes_only_that_name_unusable(tmp_path: Path) -> None:
    """lighteval keeps the last silently (its xnli module does so six times)."""
    d = tmp_path / "tasks"
    write(d / "twice.py", task_module("same", "fine", "same"))
    registry = Registry(task_dirs=[d])
    assert registry.names == ["fine"]
    message = _unusable_message(registry, "same")
    assert "defined twice" in message and "TASKS_TABLE[0]" in message and "[2]" in message
    assert registry.load("fine")[0].full_name == "fine|0"


def test_in_an_installed_package_the_last_definition_wins_with_a_warning(tmp_path: Path) -> None:
    """lighteval's own files cannot be edited by their users: its rule (the last definition
    wins) is followed there, and named in a warning; in the user's folders it stays an error."""
    d = tmp_path / "venv" / "lib" / "site-packages" / "evals" / "tasks"
    write(d / "twice.py", task_module("same", "fine", "same"))
    write(d / "zz_again.py", task_module("fine"))
    registry = Registry(task_dirs=[d])
    assert registry.names == ["fine", "same"]
    assert not registry.unusable
    assert registry.entries["same"].origin == d / "twice.py"
    assert registry.entries["fine"].origin == d / "zz_again.py"
    warnings_text = "\n".join(registry.shadowed)
    assert "task 'same' is defined twice in" in warnings_text and "[2]" in warnings_text
    assert "task 'fine' is defined in" in warnings_text and "zz_again.py" in warnings_text


@pytest.mark.parametrize("name", ["a,b", "a|b", "a@b", " padded", "all", "ports", "port:arc"])
def test_a_name_no_task_string_can_express_is_unusable(tmp_path: Path, name: str) -> None:
    d = tmp_path / "tasks"
    write(d / "odd.py", task_module(name, "fine"))
    registry = Registry(task_dirs=[d])
    assert registry.names == ["fine"]
    assert "cannot be requested" in registry.unusable[name].reason


@pytest.mark.parametrize("name", ["all_of_it", "ports_x", "sports", "mmlu:all", "export:x"])
def test_a_name_that_only_contains_a_reserved_word_is_usable(tmp_path: Path, name: str) -> None:
    d = tmp_path / "tasks"
    write(d / "near.py", task_module(name))
    assert Registry(task_dirs=[d]).names == [name]


# --- broken modules --------------------------------------------------------------------------


def test_broken_module_is_reported_and_others_stay_usable(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "good.py", task_module("good_task"))
    broken = write(d / "bad.py", task_module("bad_task", extra="raise RuntimeError('kaput 123')\n"))
    registry = Registry(task_dirs=[d])
    assert registry.names == ["good_task"]
    assert [module.path for module in registry.broken] == [broken]
    description = registry.broken[0].describe()
    assert str(broken) in description
    assert "Traceback" in description
    assert "RuntimeError: kaput 123" in description
    assert registry.load("good_task|0")[0].full_name == "good_task|0"


def test_syntax_error_module_is_reported(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "good.py", task_module("good_task"))
    write(d / "syntax.py", "TASKS_TABLE = [\n")
    registry = Registry(task_dirs=[d])
    assert registry.names == ["good_task"]
    assert "SyntaxError" in registry.broken[0].describe()


def test_requesting_a_task_of_a_broken_module_says_modules_failed(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "good.py", task_module("good_task"))
    broken = write(d / "bad.py", task_module("bad_task", extra="import no_such_module_xyz\n"))
    registry = Registry(task_dirs=[d])
    with pytest.raises(TaskStringError) as info:
        registry.load("good_task,bad_task|1")
    message = str(info.value)
    assert "'bad_task'" in message
    assert "failed to import" in message
    assert str(broken) in message
    assert "no_such_module_xyz" in message


def test_broken_custom_file_is_an_error_with_file_and_traceback(tmp_path: Path) -> None:
    custom = write(tmp_path / "custom.py", "raise ValueError('custom boom')\n")
    with pytest.raises(RegistryError) as info:
        Registry(task_dirs=[], custom_tasks=[custom])
    message = str(info.value)
    assert str(custom) in message
    assert "Traceback" in message
    assert "custom boom" in message


def test_tasks_table_holding_a_non_config_is_reported(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "good.py", task_module("good_task"))
    bad = write(
        d / "wrong_type.py",
        HEADER + "TASKS_TABLE = [cfg('fine'), {'name': 'not a config'}]\n",
    )
    registry = Registry(task_dirs=[d])
    assert registry.names == ["fine", "good_task"]  # the module's good configs stay usable
    [module] = registry.broken
    assert module.path == bad
    description = module.describe()
    assert "TASKS_TABLE[1]" in description
    assert "dict" in description
    assert "TaskConfig" in description


def test_tasks_table_that_is_not_a_list_is_reported(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "str_table.py", "TASKS_TABLE = 'gsm8k'\n")
    registry = Registry(task_dirs=[d])
    assert registry.names == []
    assert len(registry.broken) == 1
    assert "TASKS_TABLE must be a list of task configs" in registry.broken[0].describe()


# --- unknown names ---------------------------------------------------------------------------


def test_unknown_task_suggests_a_close_match(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    with pytest.raises(TaskStringError) as info:
        registry.load("mmul|5")
    message = str(info.value)
    assert "'mmul'" in message
    assert "did you mean mmlu" in message


def test_all_unknown_names_are_listed_at_once(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    with pytest.raises(TaskStringError) as info:
        registry.load("gsm8k,gsm8kk|1,arc:eazy,totally_unrelated_qqq")
    message = str(info.value)
    assert "'gsm8kk'" in message
    assert "did you mean gsm8k" in message
    assert "'arc:eazy'" in message
    assert "arc:easy" in message
    assert "'totally_unrelated_qqq'" in message
    assert "  'gsm8k'" not in message  # the known name is not reported


def test_unknown_task_error_is_an_evaltask_error(tasks_dir: Path) -> None:
    with pytest.raises(EvalTaskError):
        Registry(task_dirs=[tasks_dir]).load("nope")


# --- supersets, order, copies ----------------------------------------------------------------


def test_superset_expands_to_sorted_members(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    assert [t.full_name for t in registry.load("mmlu|2")] == [
        "mmlu:anatomy|2",
        "mmlu:astronomy|2",
        "mmlu:virology|2",
    ]
    assert registry.supersets() == {
        "arc": ["arc:challenge", "arc:easy"],
        "mmlu": ["mmlu:anatomy", "mmlu:astronomy", "mmlu:virology"],
    }


def test_single_member_prefix_is_not_a_superset(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    assert "solo" not in registry.supersets()
    with pytest.raises(TaskStringError, match="'solo'"):
        registry.load("solo")
    assert [t.name for t in registry.load("solo:only")] == ["solo:only"]


def test_order_is_the_request_order_and_duplicates_after_expansion_are_dropped(
    tasks_dir: Path,
) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    tasks = registry.load("gsm8k|1,mmlu:virology|0,mmlu|0,arc:easy|0,arc|0,gsm8k|1")
    assert [t.full_name for t in tasks] == [
        "gsm8k|1",
        "mmlu:virology|0",
        "mmlu:anatomy|0",
        "mmlu:astronomy|0",
        "arc:easy|0",
        "arc:challenge|0",
    ]


def test_same_task_twice_with_different_counts_gives_independent_copies(
    tasks_dir: Path,
) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    zero, five = registry.load("gsm8k|0,gsm8k|5")
    assert (zero.full_name, five.full_name) == ("gsm8k|0", "gsm8k|5")
    assert zero.config is not five.config
    assert zero.config.num_fewshots == 0
    assert five.config.num_fewshots == 5
    original = registry.configs["gsm8k"]
    assert original.num_fewshots == 0
    five.config.evaluation_splits.append("test")
    five.config.hf_avail_splits.clear()
    five.config.metrics.append("extra")
    five.config.version = 7
    assert zero.config.evaluation_splits == ["validation"]
    assert original.evaluation_splits == ["validation"]
    assert original.hf_avail_splits == ["train", "validation", "test"]
    assert original.metrics == ["acc"]
    assert original.version == 0
    # a later request still starts from the registered config
    assert registry.load("gsm8k|3")[0].config.evaluation_splits == ["validation"]


def test_full_name_and_metric_params(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    plain, with_params = registry.load("gsm8k|5,gsm8k@k=4@name='x'@flags=[True]|5")
    assert plain.full_name == "gsm8k|5"
    assert plain.metric_params == {}
    assert with_params.full_name == "gsm8k|5"
    assert with_params.metric_params == {"k": 4, "name": "x", "flags": [True]}
    assert isinstance(with_params, Task)
    assert with_params.name == "gsm8k"
    assert with_params.num_fewshots == 5


def test_superset_members_carry_the_metric_params(tasks_dir: Path) -> None:
    registry = Registry(task_dirs=[tasks_dir])
    tasks = registry.load("arc@k=1|1")
    assert [t.full_name for t in tasks] == ["arc:challenge|1", "arc:easy|1"]
    assert all(t.metric_params == {"k": 1} for t in tasks)
    tasks[0].metric_params["k"] = 99
    assert tasks[1].metric_params == {"k": 1}


def test_task_string_file_through_the_registry(tasks_dir: Path, tmp_path: Path) -> None:
    spec = tmp_path / "run.txt"
    spec.write_text("# run\nmmlu:anatomy|1\n\ngsm8k|0\n# arc|0\n", encoding="utf-8")
    tasks = Registry(task_dirs=[tasks_dir]).load(str(spec))
    assert [t.full_name for t in tasks] == ["mmlu:anatomy|1", "gsm8k|0"]


def test_all_tasks_is_every_registered_task_at_zero_shots(tmp_path: Path) -> None:
    d = tmp_path / "tasks"
    write(d / "misc.py", HEADER + 'TASKS_TABLE = [cfg("b:five", num_fewshots=5), cfg("a")]\n')
    registry = Registry(task_dirs=[d])
    assert [t.full_name for t in registry.all_tasks()] == ["a|0", "b:five|0"]


def test_a_folder_of_task_modules_never_loads_the_lm_eval_source(tmp_path: Path) -> None:
    """A run over task modules asks no other source kind: lm-eval's code (and the cost of
    importing it) stays out, even when YAML files sit beside the modules."""
    import subprocess

    from pytest_evaltasks.engine.sources import source_kind_of
    from pytest_evaltasks.sources.lighteval.source import LIGHTEVAL

    (tmp_path / "tasks.py").write_text(task_module("t"), encoding="utf-8")
    (tmp_path / "extra.yaml").write_text("task: t_yaml\ndataset_path: x\n", encoding="utf-8")
    assert source_kind_of(tmp_path) == LIGHTEVAL
    probe = (
        "import sys; from pathlib import Path; from pytest_evaltasks import Registry; "
        f"Registry([Path({str(tmp_path)!r})]).resolve('t|0'); "
        "print(sorted(m for m in sys.modules if 'lm_eval' in m))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert shown.strip() == "[]"
