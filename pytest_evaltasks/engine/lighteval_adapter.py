"""The boundary with lighteval's own objects: converted field by field into ours, duck-typed.

Task files written for lighteval hold its `LightevalTaskConfig`, return its `Doc` and name its
`Metrics`. Everything downstream of this module sees only our objects. Nothing here imports
lighteval: objects are recognised by their fields, so the module costs nothing when lighteval
is absent.
"""

from __future__ import annotations

from typing import Any

from .doc import Doc

DOC_FIELDS = tuple(Doc.__slots__)


def convert_doc(value: Any) -> Doc | None:
    """Our `Doc` with the same field values as a lighteval-style doc, or None if it is not one.

    A doc is recognised by having every `Doc` field; its containers are used as they are.
    """
    if not all(hasattr(value, name) for name in DOC_FIELDS):
        return None
    doc = Doc(*(getattr(value, name) for name in DOC_FIELDS))
    doc.fewshot_samples = list(doc.fewshot_samples or [])
    doc.sampling_methods = list(doc.sampling_methods or [])
    return doc
