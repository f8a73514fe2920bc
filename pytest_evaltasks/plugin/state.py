"""What the plugin keeps for one pytest session, in `config.stash`: the keys.

Free of heavy imports and of classes: the hooks read it on every pytest start, with or without
`--evaltasks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .context import RunContext
    from .lookahead import Lookahead
    from .summary import Collected


CONTEXT_KEY: pytest.StashKey[RunContext] = pytest.StashKey()
RESULTS_KEY: pytest.StashKey[Collected] = pytest.StashKey()
"""The finished items' results, as the reports arrive."""
LOOKAHEAD_KEY: pytest.StashKey[Lookahead] = pytest.StashKey()
"""The run's look-ahead process, while it runs (see `lookahead`)."""
