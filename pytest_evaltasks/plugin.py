"""pytest plugin entry point (work in progress)."""
