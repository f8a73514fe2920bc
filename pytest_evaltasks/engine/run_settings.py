"""The run options a snapshot records: what shapes the rendered prompts, and the layout.

A module of its own, free of heavy imports: the plugin reads options on every pytest start.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunSettings:
    """Run options that shape a snapshot; recorded in it, so a mismatch is named as such."""

    system_prompt: str | None = None
    chat_template: str | None = None
    """The template as recorded: a bundled name, `messages`, or a path relative to the root."""
    chat_template_digest: str | None = None
    max_samples: int | None = None
    docs_shown: int | None = None
    """Docs shown in full; None: as recorded in the snapshot, or 3 for a new one."""
    fewshot_as_multiturn: bool = True
    """A harness's rule with a chat template: few-shot examples as separate user/assistant
    turns (the default once a chat template is applied). Recorded only by the sources that
    apply it, in their own `[settings]`."""

    def recorded(self) -> dict[str, str]:
        """The `[settings]` section.

        A chat template is recorded with a digest of its source, so an edited template file is
        reported as a settings change, never as an unversioned prompt change of the task.
        `max_samples` is not recorded: a snapshot always holds every doc, and a run over fewer
        checks those it rendered against their recorded hashes.
        """
        from .line_text import file_json

        template = file_json(self.chat_template)
        if self.chat_template_digest is not None:
            template += f" (sha256:{self.chat_template_digest[:16]})"
        return {"system_prompt": file_json(self.system_prompt), "chat_template": template}
