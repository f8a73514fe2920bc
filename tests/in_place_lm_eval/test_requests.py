"""Our requests are lm-eval 0.4.13's own, doc by doc: the same order, request types, contexts,
continuations, generation arguments, targets and few-shot docs, on real lm-eval YAML tasks and
rows the tests write; in plain text and through a chat template, with and without a system
instruction, with few-shot examples as turns or as one turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

lm_eval = pytest.importorskip("lm_eval")

from lm_eval_reference import Doc, reference, reference_tasks  # noqa: E402
from lm_eval_rows import SCHEMAS, write_rows  # noqa: E402

from pytest_evaltasks.engine.chat_template import apply_chat_template, load_chat_template  # noqa: E402
from pytest_evaltasks.engine.registry import Registry  # noqa: E402
from pytest_evaltasks.engine.rendered import RenderedTask  # noqa: E402
from pytest_evaltasks.engine.run_settings import RunSettings  # noqa: E402
from pytest_evaltasks.sources.lm_eval.build import plain_arguments  # noqa: E402

TASKS = [
    "arc_easy",  # multiple choice, the default (random) sampler
    "hellaswag",  # process_docs
    "gsm8k",  # generate_until with `until`, a default num_fewshot of 5
    "boolq",  # a validation split only, choices given in the YAML
    "mmlu_anatomy",  # an mmlu subject: first_n from the dev split, a description
    "winogrande",  # multiple inputs: one context per choice
    "arc_challenge_llama",  # gen_prefix, process_docs, num_fewshot fixed at 0
    "bbh_fewshot_snarks",  # fixed fewshot_config.samples with the first_n sampler
    "wikitext",  # loglikelihood_rolling, a !function target
]


def ours(
    folder: Path, data: Path, spec: str, run: RunSettings | None = None, template: Any = None
) -> RenderedTask:
    registry = Registry([folder], [], data, wanted=[spec.split("|")[0]])
    (request,) = registry.resolve(spec)
    return registry.render(request, run or RunSettings(), template)


def assert_same(rendered: RenderedTask, docs: list[Doc]) -> None:
    """Doc by doc: id and order, requests (type, arguments, index, repeats), target, few-shot
    ids; and the export says the same."""
    assert docs, "lm-eval sent nothing"
    assert [unit.label for unit in rendered.units] == [str(doc.doc_id) for doc in docs]
    for position, (unit, doc) in enumerate(zip(rendered.units, docs, strict=True)):
        mine = [(r["type"], r["arguments"], r["repeats"]) for r in unit.fields["requests"]]
        theirs = [
            (kind, plain_arguments(tuple(args)), repeats) for kind, args, _, repeats in doc.requests
        ]
        assert mine == theirs, f"doc {doc.doc_id}"
        assert [index for _, _, index, _ in doc.requests] == list(range(len(doc.requests)))
        assert unit.fields["target"] == doc.target, f"doc {doc.doc_id}"
        assert unit.fields["fewshot_ids"] == doc.fewshot_ids, f"doc {doc.doc_id}"
        assert unit.position == position and unit.export["position"] == position
        assert unit.export["prompt"] == doc.requests[0][1][0]
        assert unit.export["contexts"] == [args[0] for _, args, _, _ in doc.requests]


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("shots", [None, 0, 3])
def test_plain_text_requests_are_lm_evals(
    lm_eval_tasks: Path, tmp_path: Path, task: str, shots: int | None
) -> None:
    write_rows(tmp_path, task)
    spec = task if shots is None else f"{task}|{shots}"
    rendered = ours(lm_eval_tasks, tmp_path, spec)
    assert_same(rendered, reference(task, shots, tmp_path))


def chat_of(name: str) -> tuple[Any, Any]:
    template = load_chat_template(name)

    def chat(history: list[dict[str, Any]], add_generation_prompt: bool) -> str:
        return apply_chat_template(
            template,
            history,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=not add_generation_prompt,
        )

    return template, chat


@pytest.mark.parametrize(
    "task", ["arc_easy", "gsm8k", "winogrande", "arc_challenge_llama", "bbh_fewshot_snarks"]
)
@pytest.mark.parametrize("system", [None, "You are a careful grader."])
@pytest.mark.parametrize("multiturn", [True, False])
def test_chat_template_requests_are_lm_evals(
    lm_eval_tasks: Path, tmp_path: Path, task: str, system: str | None, multiturn: bool
) -> None:
    first = assert_chat_requests_are_lm_evals(
        lm_eval_tasks, tmp_path, task, 2, "chatml", system, multiturn
    )
    assert first.startswith("<|im_start|>")
    if task == "arc_challenge_llama":  # gen_prefix: the assistant turn is continued
        assert first.endswith("<|im_start|>assistant\nThe best answer is")


@pytest.mark.parametrize("task", ["hellaswag", "boolq", "mmlu_anatomy"])
@pytest.mark.parametrize(("system", "multiturn"), [(None, True), ("Think first.", False)])
def test_the_other_tasks_through_a_chat_template_are_lm_evals(
    lm_eval_tasks: Path, tmp_path: Path, task: str, system: str | None, multiturn: bool
) -> None:
    first = assert_chat_requests_are_lm_evals(
        lm_eval_tasks, tmp_path, task, 3, "llama3", system, multiturn
    )
    assert first.startswith("<|begin_of_text|>")


def assert_chat_requests_are_lm_evals(
    lm_eval_tasks: Path,
    tmp_path: Path,
    task: str,
    shots: int,
    template_name: str,
    system: str | None,
    multiturn: bool,
) -> str:
    """Our requests for `task|shots` through a chat template equal lm-eval's; the first doc's
    first context, for what a template must put at its start."""
    write_rows(tmp_path, task)
    template, chat = chat_of(template_name)
    run = RunSettings(
        system_prompt=system, chat_template=template_name, fewshot_as_multiturn=multiturn
    )
    rendered = ours(lm_eval_tasks, tmp_path, f"{task}|{shots}", run, template)
    assert_same(
        rendered, reference(task, shots, tmp_path, system=system, chat=chat, multiturn=multiturn)
    )
    first: str = rendered.units[0].fields["requests"][0]["arguments"][0]
    return first


@pytest.mark.parametrize("task", ["arc_easy", "gsm8k"])
def test_a_system_instruction_in_plain_text_is_lm_evals(
    lm_eval_tasks: Path, tmp_path: Path, task: str
) -> None:
    write_rows(tmp_path, task)
    run = RunSettings(system_prompt="Answer with one word.")
    rendered = ours(lm_eval_tasks, tmp_path, f"{task}|1", run)
    assert_same(rendered, reference(task, 1, tmp_path, system="Answer with one word."))


def test_the_chat_api_message_list_is_what_lm_evals_api_models_send(
    lm_eval_tasks: Path, tmp_path: Path
) -> None:
    import json

    write_rows(tmp_path, "arc_easy")
    rendered = ours(
        lm_eval_tasks, tmp_path, "arc_easy|2", RunSettings(chat_template="messages"), None
    )
    context = rendered.units[0].fields["requests"][0]["arguments"][0]
    messages = json.loads(context)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    chat = lambda history, add_generation_prompt: json.dumps(history, ensure_ascii=False)  # noqa: E731
    assert_same(rendered, reference("arc_easy", 2, tmp_path, chat=chat))


def test_a_limit_renders_the_first_docs_and_knows_the_total(
    lm_eval_tasks: Path, tmp_path: Path
) -> None:
    write_rows(tmp_path, "arc_easy")
    rendered = ours(lm_eval_tasks, tmp_path, "arc_easy|2", RunSettings(max_samples=3))
    assert len(rendered.units) == 3 and rendered.total == SCHEMAS["arc_easy"][2]["test"]
    assert_same(rendered, reference("arc_easy", 2, tmp_path, limit=3))


def test_the_global_generators_are_given_back(lm_eval_tasks: Path, tmp_path: Path) -> None:
    """So are lm-eval's Jinja environment (its templates are compiled once per build) and
    `datasets`' caching (off while a task is built)."""
    import random

    import datasets
    import lm_eval.utils

    write_rows(tmp_path, "arc_easy")
    random.seed(77)
    state = random.getstate()
    ours(lm_eval_tasks, tmp_path, "arc_easy|2")
    assert random.getstate() == state
    assert "from_string" not in vars(lm_eval.utils.env)
    assert datasets.is_caching_enabled()


# --- a custom YAML folder (lm-eval's --include_path): yaml_tasks/ beside this file ----------

CUSTOM = Path(__file__).parent / "yaml_tasks"
CUSTOM_TASKS = [
    "tiny_mc",  # include:, process_docs hook, a description with row fields, Jinja choices
    "tiny_gen",  # several `until`, max_gen_toks, gen_prefix, fewshot_config formats, repeats
    "tiny_ll",  # one loglikelihood request; the pool is the evaluation split
    "tiny_samples",  # fewshot_config.samples from a hook, first_n
    "tiny_indices",  # the default sampler over fewshot_indices
]


@pytest.fixture(scope="module")
def custom_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = tmp_path_factory.mktemp("custom-data")
    for task in ("tiny_mc", "tiny_gen", "tiny_ll", "tiny_shuffled"):
        write_rows(data, task)
    return data


def ours_custom(data: Path, spec: str, run: RunSettings | None = None, template: Any = None):
    registry = Registry([CUSTOM], [], data, wanted=[spec.split("|")[0]])
    return [registry.render(request, run or RunSettings(), template)
            for request in registry.resolve(spec)]  # fmt: skip


@pytest.mark.parametrize("task", CUSTOM_TASKS)
@pytest.mark.parametrize("shots", [None, 3])
def test_a_custom_folders_requests_are_lm_evals(
    custom_data: Path, task: str, shots: int | None
) -> None:
    spec = task if shots is None else f"{task}|{shots}"
    (rendered,) = ours_custom(custom_data, spec)
    assert_same(rendered, reference(task, shots, custom_data, include=[CUSTOM]))


@pytest.mark.parametrize(
    "spec", ["tiny_shuffled", "tiny_shuffled_n_shot", "tiny_shuffled_n_shot|2"]
)
def test_hooks_that_shuffle_send_what_lm_eval_sends_on_every_build(
    custom_data: Path, spec: str
) -> None:
    """gpqa's shapes: `process_docs` shuffles each doc's choices with the global `random` (lm-eval
    reuses its first shuffle from the `.map` cache) or with a module-level `random.Random(42)`
    (every lm-eval process starts it from its seed). Built twice in one process, both builds
    are what lm-eval sends on every run over the same data but its first (the first run, with
    an empty cache, sends other docs for a module-level generator, and logs targets that do not
    match them), targets and prompts together."""
    name, _, shots = spec.partition("|")
    shots_asked = int(shots) if shots else None
    theirs = reference(name, shots_asked, custom_data, include=[CUSTOM], warm=True)
    for _ in range(2):
        (rendered,) = ours_custom(custom_data, spec)
        assert_same(rendered, theirs)


@pytest.mark.parametrize("multiturn", [True, False])
def test_a_custom_folders_chat_requests_are_lm_evals(custom_data: Path, multiturn: bool) -> None:
    template, chat = chat_of("chatml")
    system = "Be brief."
    run = RunSettings(system_prompt=system, chat_template="chatml", fewshot_as_multiturn=multiturn)
    for task in ("tiny_mc", "tiny_gen"):
        (rendered,) = ours_custom(custom_data, f"{task}|2", run, template)
        theirs = reference(
            task, 2, custom_data, include=[CUSTOM], system=system, chat=chat, multiturn=multiturn
        )
        assert_same(rendered, theirs)


@pytest.mark.parametrize("name", ["tiny_suite", "tiny_tag"])
def test_a_group_and_a_tag_send_what_lm_evals_send(custom_data: Path, name: str) -> None:
    """Each member, as lm-eval builds it in the group's context (the member whose config the
    group changes, the inline one), equals lm-eval's run of the whole group or tag."""
    registry = Registry([CUSTOM], [], custom_data, wanted=[name])
    requests = registry.resolve(name)
    theirs = reference_tasks(name, None, custom_data, include=[CUSTOM])
    labels = {request.label: request for request in requests}
    if name == "tiny_suite":
        variants = ["tiny_suite::tiny_gen|1", "tiny_suite::tiny_inline|0"]
        assert sorted(labels) == ["tiny_mc|0", *variants]
    else:
        assert sorted(labels) == ["tiny_ll|0", "tiny_mc|0"]
    assert len(theirs) == len(requests)
    for request in requests:
        rendered = registry.render(request)
        task = request.name if request.name in theirs else request.name.split("::", 1)[1]
        assert_same(rendered, theirs[task])
