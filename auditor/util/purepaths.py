"""A tree's relative paths as PurePosixPath values, each parsed once per process: the build model, the reach
model and the effort model ask each path's name, parts and parent many times (and `history` over every point)."""
from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath


@lru_cache(maxsize=1 << 17)
def pure(path: str) -> PurePosixPath:
    """PurePosixPath(path), shared: the value is immutable."""
    return PurePosixPath(path)
