"""`Doc`: one evaluation question, the unit every later step of the pipeline works on."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class SamplingMethod(StrEnum):
    """How a model is queried for a doc; lighteval task files import it next to `Doc`."""

    GENERATIVE = "GENERATIVE"
    LOGPROBS = "LOGPROBS"
    PERPLEXITY = "PERPLEXITY"


@dataclass(slots=True)
class Doc:
    """One question as a prompt function built it, plus what the runtime sets on it.

    A plain slotted dataclass, not a pydantic model: one is created for every row of every
    task, so construction must stay cheap. Field names and order follow lighteval's `Doc`,
    so prompt functions port unchanged.
    """

    query: str
    choices: list[str]
    gold_index: int | list[int]
    instruction: str | None = None
    images: list[Any] | None = None
    specific: dict[str, Any] | None = None
    unconditioned_query: str | None = None
    original_query: str | None = None

    id: str = ""
    task_name: str = ""

    fewshot_samples: list[Doc] = field(default_factory=list)
    sampling_methods: list[Any] = field(default_factory=list)
    fewshot_sorting_class: str | None = None

    generation_size: int | None = None
    stop_sequences: list[str] | None = None
    use_logits: bool = False
    num_samples: int = 1
    generation_grammar: Any = None

    def get_golds(self) -> list[str]:
        """The gold answers as strings; a choice that is itself a list contributes each item."""
        indices = self.gold_index if isinstance(self.gold_index, list) else [self.gold_index]
        golds: list[str] = []
        for index in indices:
            choice: Any = self.choices[index]
            if isinstance(choice, list):
                golds.extend(choice)
            else:
                golds.append(choice)
        return golds

    def content_key(self) -> tuple[Any, ...]:
        """What makes two docs "the same question": used for leak removal (SPEC 3.4)."""
        return (self.query, self.choices, self.gold_index, self.instruction)
