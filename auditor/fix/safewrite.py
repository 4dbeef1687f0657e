"""Writing a fixed file exactly where it was planned. Every component of the path from the scanned root is opened
relative to its parent's descriptor with O_NOFOLLOW (a directory swapped for a symbolic link between plan and
write fails the open), the file is the one that was read (device, inode, size and mtime unchanged), the temporary
file is made and renamed inside that same verified directory, mode bits are kept except setuid/setgid, read-only
files are left alone, and no temporary file outlives the run (stale ones from a killed run are removed on the
next one)."""
from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from auditor.util.errors import AuditorError

TEMP_SUFFIX = ".rocm-audit-fix"
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


class WriteRefused(AuditorError):
    """The file was not written; the message says why (nothing was changed)."""


@dataclass(frozen=True, slots=True)
class Identity:
    device: int
    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> Identity:
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def identity(path: str) -> Identity | None:
    try:
        return Identity.of(os.lstat(path))
    except OSError:
        return None


def write_within(root: Path, relative: str, data: bytes, planned: Identity | None) -> str | None:
    """Replace root/relative with `data`. Returns a note for the summary (e.g. dropped setuid bits) or None;
    raises WriteRefused when the file may not be written."""
    parts = PurePosixPath(relative).parts
    if not parts or any(p in ("..", "/") for p in parts):
        raise WriteRefused("the path leaves the scanned tree")
    directory = _open_dir(root, parts[:-1])
    name = parts[-1]
    try:
        _remove_stale(directory, name)
        try:
            st = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except OSError as err:
            raise WriteRefused(f"cannot stat: {err.strerror}") from None
        if not stat.S_ISREG(st.st_mode):
            raise WriteRefused("not a regular file (a symbolic link or something else replaced it)")
        if planned is not None and Identity.of(st) != planned:
            raise WriteRefused("the file changed since it was read; run fix again")
        if not st.st_mode & stat.S_IWUSR:
            raise WriteRefused("the file is read-only: left as it is")
        mode = stat.S_IMODE(st.st_mode)
        kept = mode & ~(stat.S_ISUID | stat.S_ISGID)
        temp = f".{name}.{secrets.token_hex(6)}{TEMP_SUFFIX}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600,
                     dir_fd=directory)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                os.fchmod(handle.fileno(), kept)
            os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=directory)
            except OSError:
                pass
            raise
        return "setuid/setgid bits dropped" if kept != mode else None
    finally:
        os.close(directory)


def create_within(root: Path, relative: str, data: bytes) -> str | None:
    """Create root/relative, a file that must not exist yet, in the verified directory (never through a link)."""
    parts = PurePosixPath(relative).parts
    if not parts or any(p in ("..", "/") for p in parts):
        raise WriteRefused("the path leaves the scanned tree")
    directory = _open_dir(root, parts[:-1])
    try:
        try:
            fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644,
                         dir_fd=directory)
        except FileExistsError:
            raise WriteRefused("a file of that name appeared since the plan; run fix again") from None
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return "new file"
    finally:
        os.close(directory)


def _open_dir(root: Path, parts: tuple[str, ...]) -> int:
    try:
        fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))   # the root is the user's choice
    except OSError as err:
        raise WriteRefused(f"cannot open the scanned root: {err.strerror}") from None
    for part in parts:
        try:
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            raise WriteRefused(f"{part} is no longer a directory of the tree (a symbolic link?)") from None
        os.close(fd)
        fd = inner
    return fd


def _remove_stale(directory: int, name: str) -> None:
    prefix = f".{name}."
    for entry in os.listdir(directory):
        if entry.startswith(prefix) and entry.endswith(TEMP_SUFFIX):
            try:
                os.unlink(entry, dir_fd=directory)
            except OSError:
                pass
