"""Tests that need lighteval itself; the helpers beside them are importable as plain modules."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
