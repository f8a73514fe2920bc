"""Load Jinja chat templates and render chat messages with them (prompt step 6 of
docs/differences-from-lighteval.md).

The output must match transformers' `apply_chat_template(messages, tokenize=False,
add_generation_prompt=True)` byte for byte, so the Jinja environment below reproduces the one
transformers builds: same whitespace options, extensions, globals and `tojson` filter. Templates
come from model repositories and are untrusted, so they only ever run in Jinja's sandbox.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import jinja2
import jinja2.exceptions
import jinja2.ext
import jinja2.nodes
import jinja2.sandbox
import jinja2.utils

from ..errors import ChatTemplateError, did_you_mean

if TYPE_CHECKING:
    from jinja2.parser import Parser

TEMPLATES_DIR = Path(__file__).with_name("templates")
TOKENIZER_CONFIG = "tokenizer_config.json"
# transformers >= 4.50 saves the template beside the config, and that file wins over the config.
TEMPLATE_BESIDE_CONFIG = "chat_template.jinja"

# Special tokens a bundled template uses, as the model's own tokenizer_config.json would give them.
BUNDLED_TOKENS: dict[str, tuple[str, str]] = {
    "llama3": ("<|begin_of_text|>", "<|eot_id|>"),
}


@dataclass(frozen=True)
class ChatTemplate:
    """A chat template's Jinja source and the special tokens it is rendered with."""

    name: str
    source: str
    bos_token: str = ""
    eos_token: str = ""
    files: tuple[str, ...] = field(default=(), compare=False)
    """The files (absolute) its resolution read or looked for: a change to any of them, a file
    added beside it included, changes the template."""


class TemplateRaised(jinja2.TemplateError):
    """Raised by a template's own `raise_exception(...)`, to tell it apart from Jinja's errors."""


class GenerationTag(jinja2.ext.Extension):
    """`{% generation %}...{% endgeneration %}` renders its body unchanged.

    transformers uses the tag to find assistant tokens; some hub templates carry it, and without
    it they would not even compile.
    """

    tags = {"generation"}  # noqa: RUF012 (Jinja's own class attribute type)

    def parse(self, parser: Parser) -> jinja2.nodes.CallBlock:
        """Parse the body up to `endgeneration` and wrap it in a call that returns it."""
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        block = jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body)
        block.set_lineno(lineno)
        return block

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


class ChatSandbox(jinja2.sandbox.ImmutableSandboxedEnvironment):
    """transformers' sandbox, except that reaching for an unsafe attribute fails at once.

    Jinja (and so transformers) hands back an undefined value that prints as "" and only fails
    when used further; a template that even looks at Python internals is refused instead.
    """

    def unsafe_undefined(self, obj: Any, attribute: str) -> jinja2.Undefined:
        """Raise instead of returning a silent undefined."""
        raise jinja2.exceptions.SecurityError(
            f"access to attribute {attribute!r} of {type(obj).__name__!r} object is unsafe"
        )


class TemplateNamespace(jinja2.utils.Namespace):
    """`namespace()` that refuses underscore names, as transformers' does (defence in depth)."""

    def __init__(*args: Any, **kwargs: Any) -> None:
        # No named `self` parameter, so a template may still pass a key called "self".
        self, rest = args[0], args[1:]
        attrs = dict(*rest, **kwargs)
        for key in attrs:
            check_namespace_key(key)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, key: str, value: Any) -> None:
        check_namespace_key(key)
        jinja2.utils.Namespace.__setitem__(self, key, value)


class TemplateDict:
    """`dict` for templates: builds dicts without exposing the `dict` type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*args, **kwargs)

    def fromkeys(self, keys: Any, value: Any = None) -> dict[Any, Any]:
        return dict.fromkeys(keys, value)


def check_namespace_key(key: object) -> None:
    """Reject namespace attributes that could shadow Python internals."""
    if isinstance(key, str) and key.startswith("_"):
        raise jinja2.exceptions.SecurityError(
            f"a namespace attribute may not start with an underscore: {key!r}"
        )


def raise_exception(message: str) -> NoReturn:
    """Template global: lets a template refuse a conversation it cannot format."""
    raise TemplateRaised(message)


def strftime_now(fmt: str) -> str:
    """Template global: today's date for templates that put it in the system prompt."""
    return datetime.now().strftime(fmt)


def tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """JSON without Jinja's HTML escaping; transformers' argument order (`tojson(4)` is ASCII)."""
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


@functools.lru_cache(maxsize=1)
def sandbox() -> ChatSandbox:
    """The one environment all templates compile in; built on first use."""
    env = ChatSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


@functools.lru_cache(maxsize=64)
def compile_template(source: str) -> jinja2.Template:
    """Compile once per distinct source: rendering runs once per doc, for thousands of docs."""
    return sandbox().from_string(source)


def bundled_templates() -> list[str]:
    """Names of the templates shipped with the package, sorted."""
    return sorted(path.stem for path in TEMPLATES_DIR.glob("*.jinja"))


def load_chat_template(spec: str | os.PathLike[str] | ChatTemplate) -> ChatTemplate:
    """Resolve a bundled name, a `.jinja` file, or a tokenizer config (file or directory)."""
    if isinstance(spec, ChatTemplate):
        return spec
    name = os.fspath(spec)
    if isinstance(spec, str) and name in bundled_templates():
        return load_bundled(name)
    path = Path(name)
    if path.is_dir():
        return load_tokenizer_dir(name, path)
    if not path.is_file():
        raise ChatTemplateError(
            f"chat template {name!r}: no bundled template of that name and no file at {path}"
            f"{did_you_mean(name, bundled_templates())}. Give a bundled name, a .jinja file, a "
            f"{TOKENIZER_CONFIG} or a directory holding one. {bundled_list()}"
        )
    if path.suffix == ".json":
        return load_tokenizer_config(name, path)
    return ChatTemplate(name=name, source=read_text(name, path), files=(os.path.abspath(path),))


def load_bundled(name: str) -> ChatTemplate:
    """A template shipped in `templates/`, with the special tokens its model uses."""
    bos, eos = BUNDLED_TOKENS.get(name, ("", ""))
    source = read_text(name, TEMPLATES_DIR / f"{name}.jinja")
    return ChatTemplate(name=name, source=source, bos_token=bos, eos_token=eos)


def load_tokenizer_dir(name: str, directory: Path) -> ChatTemplate:
    """A saved tokenizer directory: its config gives the tokens (and usually the template)."""
    config = directory / TOKENIZER_CONFIG
    if not config.is_file():
        raise ChatTemplateError(
            f"chat template {name!r}: directory has no {TOKENIZER_CONFIG} (looked for {config}). "
            f"{bundled_list()}"
        )
    return load_tokenizer_config(name, config)


def load_tokenizer_config(name: str, path: Path) -> ChatTemplate:
    """Read `chat_template`, `bos_token` and `eos_token` as transformers' tokenizers do."""
    try:
        config = json.loads(read_text(name, path))
    except json.JSONDecodeError as exc:
        raise ChatTemplateError(f"chat template {name!r}: {path} is not valid JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ChatTemplateError(f"chat template {name!r}: {path} does not hold a JSON object")
    beside = path.with_name(TEMPLATE_BESIDE_CONFIG)
    if beside.is_file():
        source = read_text(name, beside)
    elif config.get("chat_template") is not None:
        source = pick_default_template(name, config["chat_template"])
    else:
        raise ChatTemplateError(
            f"chat template {name!r}: {path} has no 'chat_template' key and there is no "
            f"{beside}. {bundled_list()}"
        )
    return ChatTemplate(
        name=name,
        source=source,
        bos_token=token_text(name, config, "bos_token"),
        eos_token=token_text(name, config, "eos_token"),
        files=(os.path.abspath(path), os.path.abspath(beside)),
    )


def pick_default_template(name: str, value: object) -> str:
    """A config's `chat_template` is one template, or named templates of which we use `default`."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(entry, dict) and {"name", "template"} <= entry.keys() for entry in value
    ):
        named = {str(entry["name"]): entry["template"] for entry in value}
        default = named.get("default")
        if isinstance(default, str):
            return default
        raise ChatTemplateError(
            f"chat template {name!r}: 'chat_template' lists named templates "
            f"{sorted(named)} but none is named 'default'"
        )
    raise ChatTemplateError(
        f"chat template {name!r}: 'chat_template' must be a string or a list of "
        f'{{"name": ..., "template": ...}} objects, got {type(value).__name__}'
    )


def token_text(name: str, config: Mapping[str, object], key: str) -> str:
    """A special token from a config: a string, or a serialised AddedToken's `content`."""
    value = config.get(key)
    if value is None:
        return ""
    if isinstance(value, dict):
        value = value.get("content")
    if isinstance(value, str):
        return value
    raise ChatTemplateError(
        f"chat template {name!r}: {key!r} must be a string or an object with a string "
        f"'content', got {config.get(key)!r}"
    )


def read_text(name: str, path: Path) -> str:
    """Read a template or config file, turning OS errors into our error."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ChatTemplateError(f"chat template {name!r}: cannot read {path}: {exc}") from exc


def bundled_list() -> str:
    """The sentence listing bundled names, shared by every 'not found' message."""
    return f"Bundled templates: {', '.join(bundled_templates())}."


CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
"""What transformers appends to the final message to find where it ends once rendered."""


def apply_chat_template(
    template: ChatTemplate,
    messages: Sequence[Mapping[str, object]],
    add_generation_prompt: bool = True,
    continue_final_message: bool = False,
) -> str:
    """Render `messages` ending with the generation prompt, exactly as transformers would;
    with `continue_final_message` (and no generation prompt) the rendering stops where the
    final message's content ends, so a model continues it (transformers 5's rule)."""
    if not messages:
        raise ChatTemplateError(f"chat template {template.name!r}: there are no messages to render")
    if continue_final_message:
        if add_generation_prompt:
            raise ChatTemplateError(
                "continue_final_message and add_generation_prompt exclude each other"
            )
        return _continued(template, messages)
    try:
        compiled = compile_template(template.source)
    except jinja2.TemplateSyntaxError as exc:
        raise ChatTemplateError(
            f"chat template {template.name!r} has a syntax error on line {exc.lineno}: "
            f"{exc.message}"
        ) from exc
    # transformers drops keys whose value is None before rendering; templates test for absence.
    plain = [
        {key: value for key, value in message.items() if value is not None} for message in messages
    ]
    try:
        return compiled.render(
            messages=plain,
            tools=None,
            documents=None,
            add_generation_prompt=add_generation_prompt,
            bos_token=template.bos_token,
            eos_token=template.eos_token,
        )
    except TemplateRaised as exc:
        raise ChatTemplateError(
            f"chat template {template.name!r} rejected the messages: {exc.message}"
        ) from exc
    except jinja2.exceptions.SecurityError as exc:
        raise ChatTemplateError(
            f"chat template {template.name!r} attempted an unsafe operation, blocked by the "
            f"sandbox: {exc}"
        ) from exc
    # Templates are untrusted code: whatever else goes wrong inside one is the template's fault.
    except Exception as exc:
        raise ChatTemplateError(
            f"chat template {template.name!r} failed while rendering: {type(exc).__name__}: {exc}"
        ) from exc


def _continued(template: ChatTemplate, messages: Sequence[Mapping[str, object]]) -> str:
    """The messages rendered up to the end of the final message's content (transformers 5
    tags the content, renders, and cuts at the tag)."""
    final = messages[-1].get("content")
    if not isinstance(final, str):
        raise ChatTemplateError(
            f"chat template {template.name!r}: continue_final_message needs a final message "
            f"with text content"
        )
    if "content" not in template.source:
        raise ChatTemplateError(
            f'chat template {template.name!r}: continue_final_message is set to "content" but '
            f"this is not an accepted field in the chat_template"
        )
    tagged = [*messages[:-1], {**messages[-1], "content": final + CONTINUE_TAG}]
    rendered = apply_chat_template(template, tagged, add_generation_prompt=False)
    tag = CONTINUE_TAG.strip()
    if final.strip() not in rendered or tag not in rendered:
        raise ChatTemplateError(
            f"chat template {template.name!r}: continue_final_message is set but the final "
            f"message does not appear in the chat after applying the chat template"
        )
    at = rendered.rindex(tag)
    if rendered[at : at + len(CONTINUE_TAG)] == CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()
