"""A requirement as a manifest writes it: what the manifest parsers produce and the dependency engine reads."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Declared:
    """One requirement as written in a manifest."""

    text: str
    line: int | None
    optional: bool = False
    where: str = ""       # e.g. "extra 'hopper'", shown with the finding
