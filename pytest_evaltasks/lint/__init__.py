"""Checks of a task's finished docs for prompt mistakes that change scores silently."""
