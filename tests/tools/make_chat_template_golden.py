"""Write tests/data/chat_template_golden.json: what transformers renders for the shared templates.

Run with the reference environment, which has transformers and tokenizers installed:

    /work/refvenv/bin/python tests/tools/make_chat_template_golden.py

Each of the real model templates in ../shared/chat_templates is rendered raw and flattened (as
the templates' own README suggests, for pasting into tokenizer_config.json) for every
conversation below and every pair of special tokens, through transformers' public
`apply_chat_template(messages, tokenize=False, add_generation_prompt=True)` on a minimal
fast tokenizer. The golden file holds file names, inputs and outputs, not template text; a hash
of each template source lets the test notice when the shared files change.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

Message = dict[str, str]


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


def shared_templates_dir() -> Path:
    """../shared/chat_templates next to the repository, or under $EVALTASKS_SHARED_DIR."""
    shared = os.environ.get("EVALTASKS_SHARED_DIR")
    base = Path(shared) if shared else Path(__file__).resolve().parents[3] / "shared"
    return base / "chat_templates"


def flatten(source: str) -> str:
    """The flattening the templates' README recommends before pasting into a config."""
    return source.replace("    ", "").replace("\n", "")


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


def build(templates_dir: Path) -> dict[str, Any]:
    """All cases for all templates in the folder."""
    import jinja2
    import transformers

    files = sorted(templates_dir.glob("*.jinja"))
    if not files:
        raise SystemExit(f"no .jinja files in {templates_dir}")
    cases: list[dict[str, Any]] = []
    hashes: dict[str, str] = {}
    for path in files:
        raw = path.read_text(encoding="utf-8")
        hashes[path.name] = hashlib.sha256(raw.encode("utf-8")).hexdigest()
        for flattened in (False, True):
            source = flatten(raw) if flattened else raw
            for conversation, messages in CONVERSATIONS.items():
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
    return {
        "generated_by": "tests/tools/make_chat_template_golden.py",
        "transformers_version": transformers.__version__,
        "jinja2_version": jinja2.__version__,
        "template_sha256": hashes,
        "conversations": CONVERSATIONS,
        "cases": cases,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--templates", type=Path, default=shared_templates_dir())
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parents[1] / "data" / "chat_template_golden.json",
    )
    args = parser.parse_args(argv)
    golden = build(args.templates)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(golden, ensure_ascii=False, indent=1) + "\n"
    args.out.write_text(text, encoding="utf-8")
    errors = sum("error" in case for case in golden["cases"])
    print(f"wrote {len(golden['cases'])} cases ({errors} expected errors) to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
