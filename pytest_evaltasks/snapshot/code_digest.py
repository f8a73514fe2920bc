"""A digest of what a function of the project's own does, the same under every Python.

`identity` records the project's own functions (a custom metric, a filter, a helper they call)
by a digest of their code, so that editing a body is a content change. The digest is taken
over the function's *source*, parsed: its syntax tree with positions, comments and formatting
left out. Bytecode would not do: it differs between Python minor versions (3.11 and 3.12
compile one body differently), and a record must not change when CI moves to another Python.
Editing the body, a default, a decorator or a nested function changes the digest; moving the
function, reformatting it or editing a comment does not.

Code whose source cannot be found (written by `exec`, a file deleted since) falls back to its
bytecode, named with the Python version it was compiled by: such a digest is honest about being
machine-dependent. Format 3 records used the bytecode digest throughout (`bytecode_digest`),
kept to verify those files.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import sys
import tokenize
import types
import weakref
from dataclasses import dataclass
from typing import Any

DIGEST_SIZE = 16
"""Hex digits of a code digest."""

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys, ASCII only: one text per value."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("ascii")).hexdigest()[:DIGEST_SIZE]


_SOURCE_DIGESTS: weakref.WeakKeyDictionary[types.CodeType, str] = weakref.WeakKeyDictionary()
_BYTECODE_DIGESTS: weakref.WeakKeyDictionary[types.CodeType, str] = weakref.WeakKeyDictionary()


def source_digest(code: types.CodeType) -> str:
    """The digest of the function or lambda `code` compiled from, found in its file's syntax
    tree; the versioned bytecode digest when its source cannot be found. Code objects are
    immutable, so the digest is kept for the code object's life."""
    cached = _SOURCE_DIGESTS.get(code)
    if cached is None:
        node = _source_node(code)
        if node is None:
            parts: Any = ["bytecode", list(sys.version_info[:2]), bytecode_digest(code)]
        else:
            parts = ["source", _tree(node)]
        cached = _digest(parts)
        _SOURCE_DIGESTS[code] = cached
    return cached


def bytecode_digest(code: types.CodeType) -> str:
    """Format 3's digest: bytecode, constants, names and argument layout (not file name, line
    numbers or qualified name). It changes with the Python minor version."""
    cached = _BYTECODE_DIGESTS.get(code)
    if cached is None:
        parts = [
            code.co_argcount,
            code.co_posonlyargcount,
            code.co_kwonlyargcount,
            code.co_flags,
            list(code.co_names),
            list(code.co_varnames),
            list(code.co_freevars),
            list(code.co_cellvars),
            code.co_code.hex(),
            code.co_exceptiontable.hex(),
            [_constant(item) for item in code.co_consts],
        ]
        cached = _digest(parts)
        _BYTECODE_DIGESTS[code] = cached
    return cached


def _constant(value: Any) -> Any:
    """A code constant, with nested code digested and frozensets sorted (hash order varies)."""
    if isinstance(value, types.CodeType):
        return ["code", bytecode_digest(value)]
    if isinstance(value, str):
        return value
    if isinstance(value, tuple):
        return ["tuple", [_constant(item) for item in value]]
    if isinstance(value, frozenset):
        return ["frozenset", sorted(canonical_json(_constant(item)) for item in value)]
    return [type(value).__name__, repr(value)]


# -- finding the source -------------------------------------------------------------------------


@dataclass(frozen=True)
class _ParsedFile:
    """One source file's functions and lambdas, by the line their code object starts on."""

    stamp: bytes
    functions: dict[tuple[str, int], ast.AST]
    lambdas: dict[int, list[ast.Lambda]]


_PARSED: dict[str, _ParsedFile | None] = {}


def _source_node(code: types.CodeType) -> ast.AST | None:
    """The `def` or `lambda` node `code` was compiled from, or None."""
    parsed = _parsed(code.co_filename)
    if parsed is None:
        return None
    if code.co_name != "<lambda>":
        return parsed.functions.get((code.co_name, code.co_firstlineno))
    candidates = parsed.lambdas.get(code.co_firstlineno, [])
    if len(candidates) == 1:
        return candidates[0]
    return _lambda_at(code, candidates)


def _lambda_at(code: types.CodeType, candidates: list[ast.Lambda]) -> ast.AST | None:
    """Of several lambdas on one line, the innermost whose body holds the code's first
    instruction with a position."""
    for line, end_line, column, end_column in code.co_positions():
        if line is None or column is None or end_line is None or end_column is None:
            continue
        if (line, column) == (end_line, end_column):
            continue  # the function's entry, positioned nowhere
        holding = [node for node in candidates if _holds(node.body, line, column)]
        if holding:
            return min(holding, key=lambda node: _span(node.body))
        return None
    return None


def _holds(node: ast.expr, line: int, column: int) -> bool:
    end_line, end_column = node.end_lineno or node.lineno, node.end_col_offset or 0
    return (node.lineno, node.col_offset) <= (line, column) < (end_line, end_column)


def _span(node: ast.expr) -> tuple[int, int]:
    return ((node.end_lineno or node.lineno) - node.lineno, (node.end_col_offset or 0))


def _parsed(filename: str) -> _ParsedFile | None:
    """The file's functions, parsed once per content: read again for each new code object
    (cheap), parsed again only when the bytes changed (an edit in a long-lived process)."""
    if not filename or filename.startswith("<") or not os.path.isabs(filename):
        return None
    try:
        with open(filename, "rb") as stream:
            data = stream.read()
    except OSError:
        return None
    stamp = hashlib.sha256(data).digest()
    cached = _PARSED.get(filename)
    if cached is not None and cached.stamp == stamp:
        return cached
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        tree = ast.parse(data.decode(encoding), filename)
    except (SyntaxError, UnicodeDecodeError, ValueError, LookupError):
        return None
    functions: dict[tuple[str, int], ast.AST] = {}
    lambdas: dict[int, list[ast.Lambda]] = {}
    for node in ast.walk(tree):
        if isinstance(node, _FUNCTIONS):
            first = min([node.lineno, *(item.lineno for item in node.decorator_list)])
            functions[(node.name, first)] = node
        elif isinstance(node, ast.Lambda):
            lambdas.setdefault(node.lineno, []).append(node)
    parsed = _ParsedFile(stamp, functions, lambdas)
    _PARSED[filename] = parsed
    return parsed


def _tree(node: Any) -> Any:
    """A syntax tree as plain data: node type and fields, without positions; a field that is
    empty or unset is left out, so a field a later Python added (`type_params`) and leaves
    empty, or one it stopped writing, does not change the digest."""
    if isinstance(node, ast.AST):
        fields: dict[str, Any] = {}
        for name in node._fields:
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue
            fields[name] = _tree(value)
        return [type(node).__name__, fields]
    if isinstance(node, list):
        return [_tree(item) for item in node]
    if isinstance(node, str):
        return node
    return [type(node).__name__, repr(node)]
