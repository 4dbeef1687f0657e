"""Where the cache may be: never inside a scanned tree, whoever chose it, and never around the key that signs its
entries (a workflow that saves the cache directory must not save the key with it)."""
from __future__ import annotations

from pathlib import Path

from auditor.run.runner.cachetrust.key import secret_path
from auditor.util.errors import ToolError


def default_directory() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("rocm-audit", appauthor=False))


def cache_directory(no_cache: bool, chosen: Path | None, scanned: tuple[Path, ...]) -> Path | None:
    """Where this run caches, or None. A directory the user chose (flag, ROCM_AUDIT_CACHE_DIR, their own config)
    inside a scanned path, or holding the key, is refused (ToolError: exit 2), the command line too: the tree
    could have planted entries there, and a saved copy of the directory would carry the key. The default one is
    not used when it, or the key, lies inside a scanned path, or when it holds the key."""
    if no_cache:
        return None
    if chosen is not None:
        if (tree := _holding_tree(chosen, scanned)) is not None:
            raise ToolError(f"cache directory {chosen} lies inside the scanned path {tree}: a scanned tree must "
                            "not reach the cache; choose one outside it (or --no-cache)")
        if holds_key(chosen):
            raise ToolError(f"cache directory {chosen} holds rocm-audit's cache key ({secret_path()}): whoever "
                            "gets a copy of the cache could sign entries; choose another (or --no-cache)")
        return None if _holding_tree(secret_path(), scanned) is not None else chosen
    directory = default_directory()
    if _holding_tree(directory, scanned) is not None or _holding_tree(secret_path(), scanned) is not None or \
            holds_key(directory):
        return None
    return directory


def holds_key(directory: Path) -> bool:
    """Whether `directory` holds the cache key's directory (or is it)."""
    return secret_path().parent.resolve().is_relative_to(directory.resolve())


def _holding_tree(directory: Path, scanned: tuple[Path, ...]) -> Path | None:
    """The scanned path whose tree holds `directory`: a directory itself, a file its repository (or folder)."""
    from auditor.config import project_root

    resolved = directory.resolve()
    for path in scanned:
        top = path.resolve()
        if not top.is_dir():
            top = (project_root(top) or top.parent).resolve()
        if resolved == top or resolved.is_relative_to(top):
            return path
    return None
