"""Reads of files that came from the scanned tree (configs, baselines, .gitmodules, .gitignore, `-r` includes, an
installed hipify-perl): regular files only, never more than a cap. A device (`/dev/zero`), a FIFO or a `/proc`
file would otherwise block or never end; a huge file would cost memory and time before any budget applies."""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from auditor.util.errors import ToolError

CONFIG_CAP = 1024 * 1024            # a config file or pyproject.toml
BASELINE_CAP = 64 * 1024 * 1024     # a baseline of a very large tree is still far below this
SMALL_CAP = 4 * 1024 * 1024         # .gitmodules, .gitignore, a `-r` include
TOOL_CAP = 16 * 1024 * 1024         # hipify-perl (about 1 MB today)


class UnsafeRead(ToolError):
    """Not a regular file, a link where none is allowed, or over the cap: one line naming the cause."""


def read_bounded(path: Path, cap: int, what: str = "file", follow_links: bool = True) -> bytes:
    """The bytes of a regular file of at most `cap` bytes. Opened without blocking (a FIFO would wait for a
    writer), checked on the open descriptor (no swap between check and read), and read to the cap only."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if path.is_symlink():
            raise UnsafeRead(f"{path}: the {what} is a symbolic link; give the file itself")
    if str(path.absolute()).startswith("/proc/"):
        raise UnsafeRead(f"{path}: the {what} is a /proc file, not a regular file")
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if getattr(err, "errno", None) == 40:   # ELOOP: O_NOFOLLOW met a link
            raise UnsafeRead(f"{path}: the {what} is a symbolic link; give the file itself") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeRead(f"{path}: the {what} is {_kind(info.st_mode)}, not a regular file")
        if info.st_size > cap:
            raise UnsafeRead(f"{path}: the {what} is {info.st_size:,} bytes, over the {cap:,}-byte limit")
        data = _read_fd(fd, cap + 1)
        if len(data) > cap:   # grew while being read
            raise UnsafeRead(f"{path}: the {what} is over the {cap:,}-byte limit")
        return data
    finally:
        os.close(fd)


def read_prefix(path: Path | str, limit: int) -> bytes:
    """At most `limit` bytes of a scanned source file. Opened without blocking and checked on the descriptor, so
    a FIFO, device or socket in its place (swapped in after discovery, or named on the command line) raises
    OSError instead of waiting for a writer or reading forever."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{_kind(mode)}, not a regular file")
        return _read_fd(fd, limit)
    finally:
        os.close(fd)


def _read_fd(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total < limit:
        chunk = os.read(fd, min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_text_bounded(path: Path, cap: int, what: str = "file", follow_links: bool = True,
                      errors: str = "replace") -> str:
    return read_bounded(path, cap, what, follow_links).decode("utf-8", errors)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
