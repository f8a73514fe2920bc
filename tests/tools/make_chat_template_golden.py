"""Write the chat-template golden files: what transformers renders for each template.

Run with an environment that has transformers and tokenizers installed (lighteval's, say):

    /work/venv-le/bin/python tests/tools/make_chat_template_golden.py          # both files
    /work/venv-le/bin/python tests/tools/make_chat_template_golden.py --own    # ours only

Two golden files, both rendered through transformers' public
`apply_chat_template(messages, tokenize=False, add_generation_prompt=True)` on a minimal fast
tokenizer, raw and flattened (as the shared templates' README suggests, for pasting into
tokenizer_config.json), for every conversation below and every pair of special tokens:

- tests/data/chat_templates/golden.json (`--own`): the templates this project wrote for its tests
  (tests/data/chat_templates/*.jinja), the package's bundled templates, and a tokenizer config
  loaded the way `from_pretrained` loads it. The suite checks these in every clone.
- tests/data/chat_template_golden.json (`--shared`): the licensed real model templates in
  ../shared/chat_templates (or $EVALTASKS_SHARED_DIR/chat_templates), never copied into the
  repository; the suite checks them as an extra when the folder is present.

Golden files hold file names, inputs and outputs, not template text; a hash of each template
source lets the tests notice when a template changes without its golden file.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

Message = dict[str, Any]

TESTS_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = TESTS_DIR.parent
OWN_TEMPLATES_DIR = TESTS_DIR / "data" / "chat_templates"
OWN_GOLDEN = OWN_TEMPLATES_DIR / "golden.json"
SHARED_GOLDEN = TESTS_DIR / "data" / "chat_template_golden.json"


def system(content: str) -> Message:
    return {"role": "system", "content": content}


def user(content: str) -> Message:
    return {"role": "user", "content": content}


def assistant(content: str) -> Message:
    return {"role": "assistant", "content": content}


MMLU_INSTRUCTION = "The following are multiple choice questions (with answers) about physics.\n\n"

CONVERSATIONS: dict[str, list[Message]] = {
    "user_only": [user("What is the capital of France?")],
    "system_user": [
        system("You are a helpful assistant."),
        user("What is the capital of France?"),
    ],
    "fewshot": [
        user("Question: 2 + 2 = ?\nAnswer:"),
        assistant(" 4"),
        user("Question: 3 + 3 = ?\nAnswer:"),
        assistant(" 6"),
        user("Question: 5 + 5 = ?\nAnswer:"),
    ],
    "system_fewshot": [
        system("Answer with a single letter."),
        user(MMLU_INSTRUCTION + "Question: Unit of force?\nA. N\nB. J\nAnswer:"),
        assistant(" A"),
        user("Question: Unit of energy?\nA. N\nB. J\nAnswer:"),
    ],
    "unicode": [
        system("Réponds en français — s'il te plaît."),
        user("日本語で答えてください 🙂 Ünïcödé ß"),
        assistant("はい ✅"),
        user("Ελληνικά; русский? עברית\u00a0nbsp"),
    ],
    "markup": [
        user("Say \"hi\" & <b>bold</b> 'quoted' {{ not_jinja }} {% raw %} back\\slash"),
        assistant('<|im_end|> </s> & "ok" <tag/>'),
        user("a < b && c > d; 'single' \"double\""),
    ],
    "empty_content": [system(""), user(""), assistant(""), user("")],
    "whitespace": [
        system("  padded system \n"),
        user("\n\nleading and trailing  \n\n"),
        assistant(" answer\t"),
        user("line one\r\nline two\n\nline three\n\n"),
    ],
    "system_only": [system("Only a system message.")],
    "consecutive_users": [user("first"), user("second")],
    "assistant_first": [assistant("I start."), user("Then me.")],
    "two_systems": [system("one"), system("two"), user("hi")],
}

TOKEN_PAIRS: list[tuple[str, str]] = [("<s>", "</s>"), ("", "")]

OWN_CONVERSATIONS: dict[str, list[Message]] = {
    **CONVERSATIONS,
    "tool_turns": [
        system("Use the tools when they help."),
        user("Weather in Paris, and 1 + 2?"),
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "type": "function",
                    "function": {"name": "weather", "arguments": {"city": "Paris", "unit": "C"}},
                },
                {"name": "add", "arguments": {"b": 2, "a": 1}},
            ],
        },
        {"role": "tool", "content": "18 degrees, clear"},
        {"role": "tool", "content": "3"},
        assistant("It is 18 °C in Paris, and 1 + 2 = 3."),
        user("Thanks?"),
    ],
    "content_parts": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Describe"},
                {"type": "image"},
                {"type": "text", "text": "in one word."},
            ],
        },
        assistant("Cat."),
        user("Question: and the colour?"),
    ],
    "long_chat": [
        system("Count along."),
        *[
            message
            for turn in range(1, 5)
            for message in (user(f"Turn {turn}: say {turn}?"), assistant(f"{turn}"))
        ],
        user("Question: what comes next:"),
    ],
    "stop_marker": [user("first"), assistant("STOP"), user("never shown")],
    "tabs_and_crlf": [
        user("col\tcol\r\n\r\nnext row\r\n"),
        assistant("ok\r\nfine\t"),
        user("Question:"),
    ],
}
"""The conversations of the shared golden file, and more for the features of our templates."""


def shared_templates_dir() -> Path:
    """../shared/chat_templates next to the repository, or under $EVALTASKS_SHARED_DIR."""
    shared = os.environ.get("EVALTASKS_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3] / "shared"
    return base / "chat_templates"


def flatten(source: str) -> str:
    """The flattening the templates' README recommends before pasting into a config."""
    return source.replace("    ", "").replace("\n", "")


@functools.cache
def make_tokenizer(source: str, bos: str, eos: str) -> Any:
    """A fast tokenizer with nothing but a chat template and special tokens: the real code path."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(WordLevel({"<unk>": 0}, unk_token="<unk>"))
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        chat_template=source,
        bos_token=bos or None,
        eos_token=eos or None,
    )


def render(source: str, messages: list[Message], bos: str, eos: str) -> dict[str, str]:
    """transformers' output, or the error it raises, for one case.

    An empty token is not set on the tokenizer but passed as "" (our renderer's convention for
    unknown tokens); a tokenizer without the token would leave the variable undefined instead.
    """
    tokenizer = make_tokenizer(source, bos, eos)
    extra = {name: "" for name, value in (("bos_token", bos), ("eos_token", eos)) if not value}
    try:
        output = tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True, **extra
        )
    except Exception as exc:
        return {"error": str(exc), "error_type": type(exc).__name__}
    return {"expected": output}


def template_cases(
    path: Path, conversations: dict[str, list[Message]], both_layouts: bool = True
) -> list[dict[str, Any]]:
    """Every case of one template file: raw and flattened, every conversation and token pair.

    Without `both_layouts`, a template that flattening leaves unchanged is rendered once.
    """
    raw = path.read_text(encoding="utf-8")
    cases: list[dict[str, Any]] = []
    for flattened in (False, True):
        source = flatten(raw) if flattened else raw
        if flattened and not both_layouts and source == raw:
            continue
        for conversation, messages in conversations.items():
            for bos, eos in TOKEN_PAIRS:
                case = {
                    "file": path.name,
                    "flattened": flattened,
                    "conversation": conversation,
                    "bos_token": bos,
                    "eos_token": eos,
                }
                case.update(render(source, messages, bos, eos))
                cases.append(case)
    return cases


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def versions() -> dict[str, str]:
    import jinja2
    import transformers

    return {
        "generated_by": "tests/tools/make_chat_template_golden.py",
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
    }


def build(templates_dir: Path) -> dict[str, Any]:
    """All cases for all templates in the folder (the shared golden file)."""
    files = sorted(templates_dir.glob("*.jinja"))
    if not files:
        raise SystemExit(f"no .jinja files in {templates_dir}")
    cases: list[dict[str, Any]] = []
    for path in files:
        cases += template_cases(path, CONVERSATIONS)
    return {
        **versions(),
        "template_sha256": {path.name: sha256(path.read_text(encoding="utf-8")) for path in files},
        "conversations": CONVERSATIONS,
        "cases": cases,
    }


TOKENIZER_CONFIG: dict[str, Any] = {
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
            "{{ m.role }}={{ m.content }}{{ eos_token }}{% endfor %}"
            "{% if add_generation_prompt %}?{% endif %}",
        },
    ],
}
"""A saved tokenizer's config: named templates, an AddedToken and a plain token."""


def from_pretrained_cases(conversations: dict[str, list[Message]]) -> list[dict[str, Any]]:
    """What a tokenizer loaded from TOKENIZER_CONFIG with `from_pretrained` renders."""
    import tempfile

    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast

    with tempfile.TemporaryDirectory() as folder:
        Tokenizer(WordLevel({"<unk>": 0}, unk_token="<unk>")).save(f"{folder}/tokenizer.json")
        Path(folder, "tokenizer_config.json").write_text(json.dumps(TOKENIZER_CONFIG), "utf-8")
        tokenizer = PreTrainedTokenizerFast.from_pretrained(folder)
    return [
        {
            "conversation": conversation,
            "expected": tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            ),
        }
        for conversation, messages in conversations.items()
    ]


def bundled_cases(conversations: dict[str, list[Message]]) -> tuple[dict[str, str], list[Any]]:
    """The package's bundled templates, with the special tokens the package gives them."""
    sys.path.insert(0, str(REPO_DIR))
    from pytest_evaltasks.engine.chat_template import bundled_templates, load_chat_template

    hashes: dict[str, str] = {}
    cases: list[dict[str, Any]] = []
    for name in bundled_templates():
        template = load_chat_template(name)
        hashes[name] = sha256(template.source)
        for conversation, messages in conversations.items():
            case = {
                "name": name,
                "conversation": conversation,
                "bos_token": template.bos_token,
                "eos_token": template.eos_token,
            }
            case.update(render(template.source, messages, template.bos_token, template.eos_token))
            cases.append(case)
    return hashes, cases


def build_own() -> dict[str, Any]:
    """Our own templates, the bundled ones and a from_pretrained load (the own golden file)."""
    files = sorted(OWN_TEMPLATES_DIR.glob("*.jinja"))
    cases: list[dict[str, Any]] = []
    for path in files:
        cases += template_cases(path, OWN_CONVERSATIONS, both_layouts=False)
    bundled_sha256, bundled = bundled_cases(OWN_CONVERSATIONS)
    return {
        **versions(),
        "template_sha256": {path.name: sha256(path.read_text(encoding="utf-8")) for path in files},
        "bundled_sha256": bundled_sha256,
        "conversations": OWN_CONVERSATIONS,
        "cases": cases,
        "bundled_cases": bundled,
        "tokenizer_config": {
            "config": TOKENIZER_CONFIG,
            "cases": from_pretrained_cases(OWN_CONVERSATIONS),
        },
    }


def write(golden: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(golden, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    cases = [*golden["cases"], *golden.get("bundled_cases", [])]
    errors = sum("error" in case for case in cases)
    print(f"wrote {len(cases)} cases ({errors} expected errors) to {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--own", action="store_true", help="only our templates' golden file")
    which.add_argument("--shared", action="store_true", help="only the shared templates' file")
    parser.add_argument("--templates", type=Path, default=shared_templates_dir())
    parser.add_argument("--out", type=Path, default=SHARED_GOLDEN, help="the shared golden file")
    parser.add_argument("--own-out", type=Path, default=OWN_GOLDEN, help="our golden file")
    args = parser.parse_args(argv)
    if not args.shared:
        write(build_own(), args.own_out)
    if not args.own:
        if args.templates.is_dir():
            write(build(args.templates), args.out)
        elif args.shared:
            raise SystemExit(f"no shared chat templates at {args.templates}")
        else:
            print(f"no shared chat templates at {args.templates}; kept {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
