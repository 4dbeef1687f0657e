"""TOML of a scanned tree, parsed as the standard library parses it, except that nesting too deep for its recursive
parser (`packages = [[[[...`, tens of thousands deep) is an invalid document like any other, never a crash."""
from __future__ import annotations

import tomllib
from typing import Any


def load_toml(text: str) -> dict[str, Any]:
    """tomllib.loads; a document nested past Python's recursion limit raises tomllib.TOMLDecodeError."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("nested too deeply to read") from None
