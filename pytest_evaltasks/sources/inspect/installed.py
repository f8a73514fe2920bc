"""The installed inspect_evals, as every part of the Inspect source names it: its package, the
prefix records write its files under, and its folder (found without importing it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

PACKAGE = "inspect_evals"
"""The package of inspect_evals' own tasks, named `inspect_evals/<task>`."""

OWN_PREFIX = "inspect_evals:"
"""How a file of the installed inspect_evals is recorded (its own tasks' `config_source`, a
sandbox's compose file): a file its user does not own, at a place that is the machine's."""


def installed_package() -> Path | None:
    """inspect_evals' installed folder, found without importing it."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))
