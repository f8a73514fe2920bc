"""Chat templates: loading, sandboxing, byte-identical output to transformers (README, step 6).

Expected outputs for the real model templates in ../shared/chat_templates come from
tests/data/chat_template_golden.json, written by tests/tools/make_chat_template_golden.py with
transformers itself. When transformers is importable, `TestLiveOracle` also compares directly.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
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

GOLDEN_PATH = Path(__file__).parent / "data" / "chat_template_golden.json"
GOLDEN: dict[str, Any] = json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))
CONVERSATIONS: dict[str, list[dict[str, str]]] = GOLDEN["conversations"]

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


@functools.cache
def shared_source(file: str, flattened: bool) -> str:
    """A shared template's text, checked against the hash the golden file was made from."""
    source = (SHARED_TEMPLATES / file).read_text(encoding="utf-8")
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    if digest != GOLDEN["template_sha256"][file]:
        pytest.fail(
            f"{file} changed since the golden file was made; rerun make_chat_template_golden.py"
        )
    return flatten(source) if flattened else source


def case_id(case: dict[str, Any]) -> str:
    layout = "flat" if case["flattened"] else "raw"
    tokens = "tokens" if case["bos_token"] else "notokens"
    return f"{case['file'].removesuffix('.jinja')}-{layout}-{case['conversation']}-{tokens}"


def render(source: str, messages: list[dict[str, str]], **tokens: str) -> str:
    """Render an inline template, named "inline" in errors."""
    return apply_chat_template(ChatTemplate(name="inline", source=source, **tokens), messages)


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- the 18 real model templates against transformers' output --------------------------------


@needs_shared
@pytest.mark.parametrize("case", GOLDEN["cases"], ids=case_id)
def test_matches_transformers_golden(case: dict[str, Any]) -> None:
    template = ChatTemplate(
        name=case["file"],
        source=shared_source(case["file"], case["flattened"]),
        bos_token=case["bos_token"],
        eos_token=case["eos_token"],
    )
    messages = CONVERSATIONS[case["conversation"]]
    if "error" not in case:
        assert apply_chat_template(template, messages) == case["expected"]
        return
    with pytest.raises(ChatTemplateError) as excinfo:
        apply_chat_template(template, messages)
    assert case["error"] in str(excinfo.value)
    assert case["file"] in str(excinfo.value)


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
@pytest.mark.parametrize(
    "file", ["mistral-instruct.jinja", "zephyr.jinja", "qwen2.5-instruct.jinja"]
)
def test_shared_template_via_tokenizer_config_matches_golden(file: str, tmp_path: Path) -> None:
    """The usual real-world route: a flattened template pasted into tokenizer_config.json."""
    config = {
        "chat_template": shared_source(file, flattened=True),
        "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False},
        "eos_token": "</s>",
    }
    template = load_chat_template(write_json(tmp_path / "tokenizer_config.json", config))
    (case,) = [
        case
        for case in GOLDEN["cases"]
        if case["file"] == file
        and case["flattened"]
        and case["conversation"] == "system_fewshot"
        and case["bos_token"] == "<s>"
    ]
    assert apply_chat_template(template, CONVERSATIONS["system_fewshot"]) == case["expected"]


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


# --- live oracle: transformers itself, when installed -----------------------------------------

TOOL_SOURCES = {
    "tojson_variants": "{{ messages | tojson }}|{{ messages | tojson(4) }}|"
    "{{ messages | tojson(indent=2, sort_keys=true) }}|"
    "{{ messages | tojson(separators=(',', ':')) }}",
    "loopcontrols": "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
    "{{ m.role }}:{{ m.content }}\n{% endfor %}",
    "generation": "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}"
    "{% endfor %}",
    "variables": "{{ bos_token }}{{ eos_token }}{{ add_generation_prompt }}{{ tools is none }}",
    "raise": "{{ raise_exception('nope: ' + messages[0].role) }}",
    "namespace_private": "{% set ns = namespace(_x=1) %}{{ ns }}",
}


@pytest.fixture(scope="module")
def oracle() -> Any:
    """transformers' apply_chat_template on a minimal fast tokenizer, as the golden script uses."""
    pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from transformers import PreTrainedTokenizerFast

    def apply(source: str, messages: list[dict[str, str]], bos: str, eos: str) -> str:
        backend = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
        tokenizer = PreTrainedTokenizerFast(
            tokenizer_object=backend,
            chat_template=source,
            bos_token=bos or None,
            eos_token=eos or None,
        )
        extra = {name: "" for name, value in (("bos_token", bos), ("eos_token", eos)) if not value}
        return str(
            tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True, **extra
            )
        )

    return apply


class TestLiveOracle:
    """Compare with transformers' apply_chat_template directly, when it is importable."""

    @staticmethod
    def compare(oracle: Any, template: ChatTemplate, messages: list[dict[str, str]]) -> None:
        try:
            expected = oracle(template.source, messages, template.bos_token, template.eos_token)
        except Exception as exc:
            with pytest.raises(ChatTemplateError) as excinfo:
                apply_chat_template(template, messages)
            if type(exc) is jinja2.TemplateError:  # raise_exception: the template's own words
                assert str(exc) in str(excinfo.value)
            return
        assert apply_chat_template(template, messages) == expected

    @needs_shared
    @pytest.mark.parametrize("flattened", [False, True], ids=["raw", "flat"])
    @pytest.mark.parametrize("file", sorted(GOLDEN["template_sha256"]))
    def test_shared_templates(self, oracle: Any, file: str, flattened: bool) -> None:
        source = shared_source(file, flattened)
        for bos, eos in [("<s>", "</s>"), ("", ""), ("<|begin_of_text|>", "<|eot_id|>")]:
            for messages in CONVERSATIONS.values():
                self.compare(oracle, ChatTemplate(file, source, bos, eos), messages)

    @pytest.mark.parametrize("name", ["chatml", "llama3"])
    def test_bundled_templates(self, oracle: Any, name: str) -> None:
        for messages in [*CONVERSATIONS.values(), TWO_TURNS]:
            self.compare(oracle, load_chat_template(name), messages)

    @pytest.mark.parametrize("source", TOOL_SOURCES.values(), ids=TOOL_SOURCES.keys())
    def test_environment_features(self, oracle: Any, source: str) -> None:
        for messages in [TWO_TURNS, CONVERSATIONS["markup"], CONVERSATIONS["unicode"]]:
            self.compare(oracle, ChatTemplate("inline", source, "<s>", "</s>"), messages)

    def test_tokenizer_config_loading(self, oracle: Any, tmp_path: Path) -> None:
        """Our loader picks the template and tokens transformers' from_pretrained picks."""
        import tokenizers
        from transformers import PreTrainedTokenizerFast

        backend = tokenizers.Tokenizer(tokenizers.models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
        backend.save(str(tmp_path / "tokenizer.json"))
        config = {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "bos_token": {
                "__type": "AddedToken",
                "content": "<B>",
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
            },
            "eos_token": "<E>",
            "chat_template": [
                {"name": "rag", "template": "RAG"},
                {
                    "name": "default",
                    "template": "{{ bos_token }}{% for m in messages %}"
                    "{{ m.role }}={{ m.content }}{{ eos_token }}{% endfor %}",
                },
            ],
        }
        write_json(tmp_path / "tokenizer_config.json", config)
        reference = PreTrainedTokenizerFast.from_pretrained(str(tmp_path))
        expected = reference.apply_chat_template(
            TWO_TURNS, tokenize=False, add_generation_prompt=True
        )
        assert apply_chat_template(load_chat_template(tmp_path), TWO_TURNS) == expected
