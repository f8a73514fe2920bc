"""What the lint rules read of a rendered task, whatever rendered it: each doc as a `LintDoc`,
the task as a whole as a `LintTask`.

Every source describes its docs in this one neutral form (our `Doc`s in `doc_lint`, another
harness's requests in its own source module), so the rules (`lint.rules`) exist once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class LintDoc:
    """One evaluated doc as the lint rules read it, whatever rendered it.

    - `prompt_end`: the last character of the text a model continues on its own ("" when the
      doc is only ever scored with its choices appended);
    - `joins`: what a scored doc appends to what, as (context, choices) pairs, one per context;
    - `blank_query`, `scored`: the query's and the scored choices' texts, for emptiness;
    - `choice_keys`: one hashable value per choice (a repeat is a duplicate choice);
    - `counted`: the number of choices of a multiple-choice doc (0: not one);
    - `asked`: what makes two docs the same question;
    - `golds`, `stops`, `max_tokens`: what a generation is judged by;
    - `fewshots_repeat`: two of its few-shot examples are one.
    """

    label: str
    prompt_end: str
    joins: Sequence[tuple[str, Sequence[str]]]
    blank_query: bool
    scored: Sequence[str]
    choice_keys: tuple[Any, ...]
    counted: int
    asked: Hashable
    golds: Sequence[str] = ()
    stops: Sequence[str] = ()
    max_tokens: int | None = None
    fewshots_repeat: bool = False


@dataclass(frozen=True)
class LintTask:
    """What the lint rules read of a task as a whole: its few-shot pool."""

    pool_is_eval: bool
    """Examples are drawn from the evaluated split."""
    pool_short: str | None
    """Why the pool is too small for the shots asked (None: it is not)."""
