"""Chat templates: loading, sandboxing, byte-identical output to transformers.

Prompt step 6 of docs/differences-from-lighteval.md.

Expected outputs come from golden files written by tests/tools/make_chat_template_golden.py with
transformers itself: tests/data/chat_templates/golden.json for the templates this project wrote
(tests/data/chat_templates/*.jinja, exercising the Jinja features real model templates use) and
for the bundled ones, checked in every clone; tests/data/chat_template_golden.json for the 18
real model templates in ../shared/chat_templates (or $EVALTASKS_SHARED_DIR), checked when that
folder is present. When transformers is importable, every golden case is also rendered by it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2.exceptions
import pytest

from pytest_evaltasks.engine.chat_template import (
    ChatTemplate,
    apply_chat_template,
    bundled_templates,
    compile_template,
    load_chat_template,
)
from pytest_evaltasks.errors import ChatTemplateError, EvalTaskError

DATA_DIR = Path(__file__).parent / "data"
OWN_DIR = DATA_DIR / "chat_templates"
OWN_GOLDEN: dict[str, Any] = json.loads((OWN_DIR / "golden.json").read_text(encoding="utf-8"))
OWN_CONVERSATIONS: dict[str, list[dict[str, Any]]] = OWN_GOLDEN["conversations"]
GOLDEN_PATH = DATA_DIR / "chat_template_golden.json"
GOLDEN: dict[str, Any] = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))
CONVERSATIONS: dict[str, list[dict[str, str]]] = GOLDEN["conversations"]
GOLDEN_TOOL = Path(__file__).parent / "tools" / "make_chat_template_golden.py"
REGENERATE = f"rerun {GOLDEN_TOOL.relative_to(Path(__file__).parents[1])} with transformers"

TWO_TURNS = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "What is 2+2? "},
    {"role": "assistant", "content": "4"},
    {"role": "user", "content": "And 3+3?"},
]


def shared_templates_dir() -> Path:
    """../shared/chat_templates beside the repository, or under $EVALTASKS_SHARED_DIR."""
    shared = os.environ.get("EVALTASKS_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[2] / "shared"
    return base / "chat_templates"


SHARED_TEMPLATES = shared_templates_dir()
needs_shared = pytest.mark.skipif(
    not SHARED_TEMPLATES.is_dir(), reason=f"shared chat templates absent: {SHARED_TEMPLATES}"
)


def flatten(source: str) -> str:
    """The flattening the shared templates' README recommends."""
    return source.replace("    ", "").replace("\n", "")


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.cache
def shared_source(file: str, flattened: bool) -> str:
    """A shared template's text, checked against the hash the golden file was made from."""
    source = (SHARED_TEMPLATES / file).read_text(encoding="utf-8")
    if sha256(source) != GOLDEN["template_sha256"][file]:
        pytest.fail(f"{file} changed since the golden file was made; {REGENERATE}")
    return flatten(source) if flattened else source


@functools.cache
def own_source(file: str, flattened: bool) -> str:
    """One of our templates, checked against the hash its golden cases were made from."""
    source = (OWN_DIR / file).read_text(encoding="utf-8")
    if sha256(source) != OWN_GOLDEN["template_sha256"].get(file):
        pytest.fail(f"{OWN_DIR.name}/{file} changed since golden.json was made; {REGENERATE} --own")
    return flatten(source) if flattened else source


def case_id(case: dict[str, Any]) -> str:
    layout = "flat" if case["flattened"] else "raw"
    tokens = "tokens" if case["bos_token"] else "notokens"
    return f"{case['file'].removesuffix('.jinja')}-{layout}-{case['conversation']}-{tokens}"


def outcome(case: dict[str, Any]) -> dict[str, str]:
    """What transformers did in a golden case: its text, or the error it raised."""
    return {key: case[key] for key in ("expected", "error", "error_type") if key in case}


def render(source: str, messages: list[dict[str, str]], **tokens: str) -> str:
    """Render an inline template, named "inline" in errors."""
    return apply_chat_template(ChatTemplate(name="inline", source=source, **tokens), messages)


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def check_case(
    template: ChatTemplate, messages: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    """Our rendering matches transformers' text, or fails where transformers raised.

    A template's own `raise_exception` words and Jinja's errors are quoted; the sandbox's
    refusals are worded by each renderer, so only the refusal itself must agree.
    """
    if "error" not in case:
        assert apply_chat_template(template, messages) == case["expected"]
        return
    with pytest.raises(ChatTemplateError) as excinfo:
        apply_chat_template(template, messages)
    assert repr(template.name) in str(excinfo.value)
    if case["error_type"] == "SecurityError":
        assert "sandbox" in str(excinfo.value)
    else:
        assert case["error"] in str(excinfo.value)


@pytest.fixture(scope="module")
def live() -> Any:
    """The golden tool, to render with transformers itself when it is importable, else None.

    Every golden test then also checks that its recorded case is what transformers renders
    today, so a golden file that went stale fails where transformers is installed (`tox -e
    lighteval`, /work/venv-le). Without transformers, the golden files alone are the oracle: no
    test skips for want of it.
    """
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return None
    spec = importlib.util.spec_from_file_location("make_chat_template_golden", GOLDEN_TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def check_live(
    live: Any, source: str, messages: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    """Where transformers is importable, the golden case is what it renders now."""
    if live is not None:
        now = live.render(source, messages, case["bos_token"], case["eos_token"])
        assert now == outcome(case), f"transformers renders otherwise today; {REGENERATE}"


# --- our own templates (tests/data/chat_templates) against transformers' output ---------------

FEATURES = {
    "loop.first": r"loop\.first",
    "loop.last": r"loop\.last",
    "loop.index": r"loop\.index\b",
    "loop.index0": r"loop\.index0",
    "loop.length / revindex / previtem / cycle": r"loop\.(length|revindex|previtem|cycle)",
    "system message special-cased": r"messages\[0\]\['role'\] == 'system'",
    "messages[1:]": r"messages\[1:\]",
    "raise_exception": r"raise_exception\(",
    "namespace() counters": r"set \w+\.\w+ = \w+\.\w+ \+ 1",
    "trim": r"\| trim",
    "strip": r"\.strip\(\)",
    "replace filter and method": r"\| replace\(.*\.replace\(|\.replace\(.*\| replace\(",
    "upper / lower / capitalize / title": r"\| (upper|lower|capitalize|title)",
    "tojson": r"\| tojson\b",
    "tojson arguments": r"tojson\((indent=|4\)|sort_keys=|separators=)",
    "bos_token / eos_token": r"bos_token.*|eos_token",
    "add_generation_prompt": r"add_generation_prompt",
    "macros and call blocks": r"{% macro .*{% call ",
    "generation tag": r"{%-? generation -?%}",
    "strftime_now": r"strftime_now\(",
    "content is string": r"is string",
    "whitespace control": r"{%-.*-%}|{{-.*-}}",
    "tool role and tool_calls": r"role == 'tool'.*tool_calls|tool_calls.*role == 'tool'",
    "tools variable": r"if tools",
    "is defined / default": r"is (not )?defined|\| default\(",
    "loop controls": r"{% (break|continue) %}",
    "selectattr / map / join": r"selectattr\(.*\| map\(.*\| join",
    "string slicing and % formatting": r"\[:\d+\].*|% \(",
    "dict and namespace globals": r"dict\(.*namespace\(|namespace\(.*dict\(",
}
"""The Jinja features real model templates use, each in at least one of our templates."""


@pytest.mark.parametrize("case", OWN_GOLDEN["cases"], ids=case_id)
def test_own_template_matches_transformers_golden(case: dict[str, Any], live: Any) -> None:
    source = own_source(case["file"], case["flattened"])
    messages = OWN_CONVERSATIONS[case["conversation"]]
    template = ChatTemplate(case["file"], source, case["bos_token"], case["eos_token"])
    check_case(template, messages, case)
    check_live(live, source, messages, case)


def test_own_golden_covers_every_template_feature_and_error() -> None:
    """Every template in the folder has golden cases; together they exercise every feature."""
    files = sorted(path.name for path in OWN_DIR.glob("*.jinja"))
    assert files == sorted(OWN_GOLDEN["template_sha256"]), (
        f"templates added or removed: {REGENERATE}"
    )
    assert {case["file"] for case in OWN_GOLDEN["cases"]} == set(files)
    sources = [(OWN_DIR / file).read_text(encoding="utf-8") for file in files]
    missing = [
        name
        for name, pattern in FEATURES.items()
        if not any(re.search(pattern, source, re.DOTALL) for source in sources)
    ]
    assert not missing, f"no template of ours uses: {missing}"
    assert {case["flattened"] for case in OWN_GOLDEN["cases"]} == {False, True}
    assert {case["bos_token"] for case in OWN_GOLDEN["cases"]} == {"<s>", ""}
    errors = {case["error_type"] for case in OWN_GOLDEN["cases"] if "error" in case}
    assert errors == {"TemplateError", "TypeError", "UndefinedError", "SecurityError"}
    assert set(OWN_CONVERSATIONS) >= set(CONVERSATIONS)
    # Each template renders some conversation, and the flattened layout changes some outputs.
    rendered = {case["file"] for case in OWN_GOLDEN["cases"] if "expected" in case}
    assert rendered == set(files)
    by_layout = {
        (case["file"], case["conversation"], case["bos_token"], case["flattened"]): case
        for case in OWN_GOLDEN["cases"]
    }
    assert any(
        case.get("expected") != by_layout[(*key[:3], True)].get("expected")
        for key, case in by_layout.items()
        if not key[3] and (*key[:3], True) in by_layout
    )


@pytest.mark.parametrize(
    "case",
    OWN_GOLDEN["bundled_cases"],
    ids=lambda case: f"{case['name']}-{case['conversation']}",
)
def test_bundled_template_matches_transformers_golden(case: dict[str, Any], live: Any) -> None:
    template = load_chat_template(case["name"])
    if sha256(template.source) != OWN_GOLDEN["bundled_sha256"][case["name"]]:
        pytest.fail(
            f"bundled template {case['name']} changed since golden.json; {REGENERATE} --own"
        )
    assert (template.bos_token, template.eos_token) == (case["bos_token"], case["eos_token"])
    messages = OWN_CONVERSATIONS[case["conversation"]]
    check_case(template, messages, case)
    check_live(live, template.source, messages, case)


def test_golden_lists_every_bundled_template() -> None:
    assert sorted(OWN_GOLDEN["bundled_sha256"]) == bundled_templates()


def test_tokenizer_config_loads_as_from_pretrained_does(tmp_path: Path, live: Any) -> None:
    """Our loader picks the template and tokens transformers' from_pretrained picks."""
    recorded = OWN_GOLDEN["tokenizer_config"]
    template = load_chat_template(
        write_json(tmp_path / "tokenizer_config.json", recorded["config"])
    )
    assert (template.bos_token, template.eos_token) == ("<B>", "<E>")
    for case in recorded["cases"]:
        messages = OWN_CONVERSATIONS[case["conversation"]]
        assert apply_chat_template(template, messages) == case["expected"], case["conversation"]
    if live is not None:
        assert recorded["config"] == live.TOKENIZER_CONFIG, REGENERATE
        assert live.from_pretrained_cases(OWN_CONVERSATIONS) == recorded["cases"], REGENERATE


# --- the 18 real model templates in ../shared, an extra check when present --------------------


def compare_live(live: Any, template: ChatTemplate, messages: list[dict[str, Any]]) -> None:
    """Our rendering against transformers' for a case no golden file records."""
    now = live.render(template.source, messages, template.bos_token, template.eos_token)
    if "expected" in now:
        assert apply_chat_template(template, messages) == now["expected"]
        return
    with pytest.raises(ChatTemplateError) as excinfo:
        apply_chat_template(template, messages)
    if now["error_type"] == "TemplateError":  # raise_exception: the template's own words
        assert now["error"] in str(excinfo.value)


@needs_shared
@pytest.mark.parametrize("file", sorted(GOLDEN["template_sha256"]))
def test_shared_template_matches_transformers_golden(file: str, live: Any) -> None:
    """Every golden case of one shared template (raw and flat, conversations, tokens)."""
    failures: list[str] = []
    for case in (case for case in GOLDEN["cases"] if case["file"] == file):
        source = shared_source(file, case["flattened"])
        template = ChatTemplate(file, source, case["bos_token"], case["eos_token"])
        messages = CONVERSATIONS[case["conversation"]]
        try:
            check_case(template, messages, case)
            check_live(live, source, messages, case)
        except (AssertionError, pytest.fail.Exception) as exc:
            failures.append(f"{case_id(case)}: {exc}")
    assert not failures, "\n".join(failures)
    if live is not None:  # a third pair of tokens, which the golden file does not record
        for flattened in (False, True):
            source = shared_source(file, flattened)
            for messages in CONVERSATIONS.values():
                template = ChatTemplate(file, source, "<|begin_of_text|>", "<|eot_id|>")
                compare_live(live, template, messages)


def test_golden_covers_templates_and_errors() -> None:
    """The golden file really exercises both flattening, both token sets and raising templates."""
    files = {case["file"] for case in GOLDEN["cases"]}
    assert len(files) == 18
    assert {case["flattened"] for case in GOLDEN["cases"]} == {False, True}
    assert {case["bos_token"] for case in GOLDEN["cases"]} == {"<s>", ""}
    raised = [case for case in GOLDEN["cases"] if case.get("error_type") == "TemplateError"]
    assert any("must alternate" in case["error"] for case in raised)


@needs_shared
def test_shared_template_loads_from_jinja_path() -> None:
    path = SHARED_TEMPLATES / "llama-3-instruct.jinja"
    template = load_chat_template(path)
    assert template == ChatTemplate(name=str(path), source=path.read_text(encoding="utf-8"))


@needs_shared
def test_shared_template_via_tokenizer_config_matches_golden(tmp_path: Path) -> None:
    """The usual real-world route: a flattened template pasted into tokenizer_config.json."""
    for file in ["mistral-instruct.jinja", "zephyr.jinja", "qwen2.5-instruct.jinja"]:
        config = {
            "chat_template": shared_source(file, flattened=True),
            "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False},
            "eos_token": "</s>",
        }
        folder = tmp_path / file
        folder.mkdir()
        template = load_chat_template(write_json(folder / "tokenizer_config.json", config))
        (case,) = [
            case
            for case in GOLDEN["cases"]
            if case["file"] == file
            and case["flattened"]
            and case["conversation"] == "system_fewshot"
            and case["bos_token"] == "<s>"
        ]
        rendered = apply_chat_template(template, CONVERSATIONS["system_fewshot"])
        assert rendered == case["expected"], file


# --- bundled templates -------------------------------------------------------------------------


def test_bundled_template_names() -> None:
    assert bundled_templates() == ["chatml", "llama3"]


def test_bundled_chatml() -> None:
    template = load_chat_template("chatml")
    assert (template.name, template.bos_token, template.eos_token) == ("chatml", "", "")
    assert apply_chat_template(template, TWO_TURNS) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2? <|im_end|>\n"
        "<|im_start|>assistant\n4<|im_end|>\n"
        "<|im_start|>user\nAnd 3+3?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_bundled_llama3_defaults_bos_and_trims_content() -> None:
    template = load_chat_template("llama3")
    assert template.bos_token == "<|begin_of_text|>"
    assert apply_chat_template(template, TWO_TURNS) == (
        "<|begin_of_text|>"
        "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nAnd 3+3?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


def test_bundled_llama3_with_custom_bos() -> None:
    template = ChatTemplate(name="x", source=load_chat_template("llama3").source, bos_token="")
    rendered = apply_chat_template(template, [{"role": "user", "content": "hi"}])
    assert rendered == (
        "<|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


# --- loading -----------------------------------------------------------------------------------


def test_chat_template_instance_is_returned_unchanged() -> None:
    template = ChatTemplate(name="mine", source="{{ messages[0].content }}")
    assert load_chat_template(template) is template


@pytest.mark.parametrize("as_str", [True, False], ids=["str", "pathlike"])
def test_load_jinja_file(tmp_path: Path, as_str: bool) -> None:
    path = tmp_path / "custom.jinja"
    path.write_text("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}", "utf-8")
    template = load_chat_template(str(path) if as_str else path)
    assert template.name == str(path)
    assert (template.bos_token, template.eos_token) == ("", "")
    assert apply_chat_template(template, TWO_TURNS[1:2]) == "[user]What is 2+2? "


def test_load_tokenizer_config_with_string_template(tmp_path: Path) -> None:
    config = {
        "chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "model_max_length": 4096,
    }
    path = write_json(tmp_path / "tokenizer_config.json", config)
    template = load_chat_template(path)
    assert template == ChatTemplate(str(path), config["chat_template"], "<s>", "</s>")
    assert apply_chat_template(template, [{"role": "user", "content": "x"}]) == "<s>x</s>"


def test_load_tokenizer_config_picks_default_of_named_templates(tmp_path: Path) -> None:
    config = {
        "chat_template": [
            {"name": "tool_use", "template": "TOOLS"},
            {"name": "default", "template": "DEFAULT {{ messages | length }}"},
            {"name": "rag", "template": "RAG"},
        ],
    }
    template = load_chat_template(write_json(tmp_path / "tokenizer_config.json", config))
    assert template.source == "DEFAULT {{ messages | length }}"
    assert apply_chat_template(template, TWO_TURNS) == "DEFAULT 4"


def test_load_tokenizer_config_added_token_dicts(tmp_path: Path) -> None:
    def added(content: str) -> dict[str, object]:
        return {
            "__type": "AddedToken",
            "content": content,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
        }

    config = {"chat_template": "T", "bos_token": added("<|begin|>"), "eos_token": added("<|end|>")}
    template = load_chat_template(write_json(tmp_path / "tokenizer_config.json", config))
    assert (template.bos_token, template.eos_token) == ("<|begin|>", "<|end|>")


def test_load_tokenizer_config_null_tokens_become_empty(tmp_path: Path) -> None:
    config = {"chat_template": "T", "bos_token": None}
    template = load_chat_template(write_json(tmp_path / "tokenizer_config.json", config))
    assert (template.bos_token, template.eos_token) == ("", "")


def test_load_tokenizer_directory(tmp_path: Path) -> None:
    write_json(tmp_path / "tokenizer_config.json", {"chat_template": "T", "eos_token": "</s>"})
    template = load_chat_template(tmp_path)
    assert (template.name, template.source, template.eos_token) == (str(tmp_path), "T", "</s>")


def test_template_file_beside_config_wins_like_transformers(tmp_path: Path) -> None:
    """Tokenizers saved by transformers >= 4.50 keep the template in chat_template.jinja."""
    write_json(tmp_path / "tokenizer_config.json", {"bos_token": "<s>"})
    (tmp_path / "chat_template.jinja").write_text("FROM FILE", encoding="utf-8")
    template = load_chat_template(tmp_path)
    assert (template.source, template.bos_token) == ("FROM FILE", "<s>")


def test_missing_chat_template_key_is_an_error(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer_config.json", {"bos_token": "<s>"})
    with pytest.raises(ChatTemplateError, match="no 'chat_template' key") as excinfo:
        load_chat_template(path)
    assert str(path) in str(excinfo.value)
    assert "chatml, llama3" in str(excinfo.value)


def test_named_templates_without_default_is_an_error(tmp_path: Path) -> None:
    config = {
        "chat_template": [{"name": "rag", "template": "R"}, {"name": "tool_use", "template": "T"}]
    }
    path = write_json(tmp_path / "tokenizer_config.json", config)
    with pytest.raises(ChatTemplateError, match=r"\['rag', 'tool_use'\].*'default'"):
        load_chat_template(path)


def test_bad_json_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer_config.json"
    path.write_text('{"chat_template": ', encoding="utf-8")
    with pytest.raises(ChatTemplateError, match="not valid JSON") as excinfo:
        load_chat_template(path)
    assert str(path) in str(excinfo.value)


def test_bad_token_type_is_an_error(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer_config.json", {"chat_template": "T", "bos_token": 1})
    with pytest.raises(ChatTemplateError, match="'bos_token'"):
        load_chat_template(path)


def test_directory_without_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ChatTemplateError, match=r"tokenizer_config\.json") as excinfo:
        load_chat_template(tmp_path)
    assert "Bundled templates: chatml, llama3." in str(excinfo.value)


def test_unknown_name_lists_bundled_templates() -> None:
    with pytest.raises(ChatTemplateError) as excinfo:
        load_chat_template("chatlm")
    message = str(excinfo.value)
    assert "'chatlm'" in message
    assert "did you mean chatml?" in message
    assert "Bundled templates: chatml, llama3." in message
    assert isinstance(excinfo.value, EvalTaskError)


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.jinja"
    with pytest.raises(ChatTemplateError, match="no file at") as excinfo:
        load_chat_template(path)
    assert str(path) in str(excinfo.value)


# --- rendering environment -----------------------------------------------------------------------


def test_variables_passed_to_template() -> None:
    source = (
        "{{ add_generation_prompt }}|{{ bos_token }}|{{ eos_token }}|"
        "{{ bos_token is defined }}|{{ tools is none }}|{{ documents is none }}"
    )
    assert render(source, TWO_TURNS, bos_token="<s>") == "True|<s>||True|True|True"


def test_none_valued_keys_are_dropped() -> None:
    """transformers removes keys whose value is None, so templates see them as undefined."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": None}]
    assert render("{{ messages[0].content is defined }}", messages) == "False"


def test_trim_blocks_and_lstrip_blocks() -> None:
    source = "A\n    {% if true %}\n    B\n    {% endif %}\nC{{ 'x' }}\n"
    assert render(source, TWO_TURNS) == "A\n    B\nCx"


def test_raise_exception_message_propagates() -> None:
    source = (
        "{% if messages[0].role == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
    )
    with pytest.raises(ChatTemplateError) as excinfo:
        render(source, TWO_TURNS)
    expected = "chat template 'inline' rejected the messages: System role not supported"
    assert str(excinfo.value) == expected


def test_syntax_error_names_template_and_line() -> None:
    with pytest.raises(ChatTemplateError, match=r"'inline' has a syntax error on line 2: .*"):
        render("ok\n{% if %}", TWO_TURNS)


def test_runtime_error_is_wrapped() -> None:
    with pytest.raises(ChatTemplateError, match=r"'inline' failed while rendering: TypeError"):
        render("{{ 1 + 'a' }}", TWO_TURNS)


def test_empty_messages_is_an_error() -> None:
    with pytest.raises(ChatTemplateError, match="no messages"):
        render("x", [])


def test_tojson_does_not_html_escape_and_keeps_non_ascii() -> None:
    messages = [{"role": "user", "content": "<b>&'\"é日本🙂"}]
    assert render("{{ messages | tojson }}", messages) == json.dumps(messages, ensure_ascii=False)
    assert render("{{ messages[0].content | tojson }}", messages) == '"<b>&\'\\"é日本🙂"'


def test_tojson_arguments_follow_transformers() -> None:
    messages = [{"role": "user", "content": "é"}]
    assert render("{{ messages | tojson(indent=2, sort_keys=true) }}", messages) == (
        '[\n  {\n    "content": "é",\n    "role": "user"\n  }\n]'
    )
    assert render("{{ messages | tojson(separators=(',', ':')) }}", messages) == (
        '[{"role":"user","content":"é"}]'
    )
    # The first positional argument is ensure_ascii, not indent as in Jinja's own filter.
    ascii_json = '[{"role": "user", "content": "\\u00e9"}]'
    assert render("{{ messages | tojson(4) }}", messages) == ascii_json


def test_strftime_now() -> None:
    before = datetime.now().strftime("%Y-%m-%d")
    rendered = render("{{ strftime_now('%Y-%m-%d') }}", TWO_TURNS)
    after = datetime.now().strftime("%Y-%m-%d")
    assert rendered in {before, after}


def test_loopcontrols() -> None:
    source = (
        "{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}"
        "{% if m.role == 'assistant' %}{% break %}{% endif %}{{ m.content }};{% endfor %}"
    )
    assert render(source, TWO_TURNS) == "What is 2+2? ;"


def test_generation_tag_renders_its_body() -> None:
    source = "{% for m in messages %}{% generation %}{{ m.role }}{% endgeneration %} {% endfor %}"
    assert render(source, TWO_TURNS) == "system user assistant user "


def test_namespace_and_dict_globals() -> None:
    source = (
        "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n }} {{ dict(a=1) }} {{ dict.fromkeys(['k']) }}"
    )
    assert render(source, TWO_TURNS) == "4 {'a': 1} {'k': None}"


def test_compiled_templates_are_cached() -> None:
    source = "{{ messages | length }} cached"
    assert compile_template(source) is compile_template(source)
    hits = compile_template.cache_info().hits
    render(source, TWO_TURNS)
    assert compile_template.cache_info().hits == hits + 1


# --- sandbox -----------------------------------------------------------------------------------

ESCAPES = {
    "str_mro": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "cycler_globals": "{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}",
    "joiner_globals": "{{ joiner.__init__.__globals__['os'].system('touch {marker}') }}",
    "lipsum_globals": "{{ lipsum.__globals__['os'].popen('touch {marker}') }}",
    "function_globals": "{{ raise_exception.__globals__ }}",
    "messages_class": "{{ messages.__class__.__base__ }}",
    "format_string": "{{ '{0.__class__.__mro__}'.format(messages) }}",
    "attr_filter": "{{ messages | attr('__class__') }}",
    "mutate_messages": "{{ messages.append({'role': 'user', 'content': 'injected'}) }}",
    "mutate_message": "{{ messages[0].update({'content': 'changed'}) }}",
    "namespace_dunder": "{% set ns = namespace(__class__=1) %}{{ ns }}",
    "namespace_set_private": "{% set ns = namespace() %}{% set ns._private = 1 %}{{ ns }}",
}


@pytest.mark.parametrize("source", ESCAPES.values(), ids=ESCAPES.keys())
def test_sandbox_escape_fails_safely(source: str, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    messages = [dict(message) for message in TWO_TURNS]
    with pytest.raises(ChatTemplateError, match="'inline'") as excinfo:
        render(source.replace("{marker}", str(marker)), messages)
    assert isinstance(excinfo.value.__cause__, jinja2.exceptions.SecurityError)
    assert "sandbox" in str(excinfo.value)
    assert not marker.exists()
    assert messages == TWO_TURNS


def test_huge_range_is_refused() -> None:
    with pytest.raises(ChatTemplateError):
        render("{% for i in range(10 ** 9) %}x{% endfor %}", TWO_TURNS)
