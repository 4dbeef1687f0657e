"""A 32-byte random key in the user's state directory (platformdirs: `~/.local/state/rocm-audit` on Linux), made
on first use: mode 0600 in a 0700 directory, this user's, a regular file (not a link). It is never inside a cache
directory (a CI workflow saves and restores those, so whoever writes the saved cache could sign entries) nor
inside a scanned tree (auditor/run/runner/cachetrust/place.py refuses such a cache, or caches nothing)."""
from __future__ import annotations

import os
import secrets
import stat
from functools import cache
from pathlib import Path

KEY_BYTES = 32
KEY_NAME = "cache-key"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def secret_path() -> Path:
    from platformdirs import user_state_dir

    return Path(user_state_dir("rocm-audit", appauthor=False)) / KEY_NAME


@cache
def cache_secret() -> bytes | None:
    """The key, or None when it cannot be made or read safely (then nothing is cached)."""
    path = secret_path()
    try:
        os.makedirs(path.parent, mode=0o700, exist_ok=True)
        if not os.path.lexists(path):
            _create(path)
        return _read(path)
    except OSError:
        return None


def _create(path: Path) -> None:
    """Written whole under a temporary name, then linked into place: a concurrent run sees the whole key or
    none, and the first run's key wins."""
    temporary = path.with_name(f".{KEY_NAME}-{os.getpid()}-{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
    finally:
        temporary.unlink(missing_ok=True)


def _read(path: Path) -> bytes | None:
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    try:
        info = os.fstat(fd)
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not stat.S_ISREG(info.st_mode) or not mine or info.st_mode & 0o077 or info.st_size != KEY_BYTES:
            return None
        data = os.read(fd, KEY_BYTES + 1)
    finally:
        os.close(fd)
    return data if len(data) == KEY_BYTES else None
