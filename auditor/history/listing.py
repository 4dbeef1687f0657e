"""A point's files found from its commit's `git ls-tree` listing, as `check` finds them in a checkout of that
commit (auditor/run/discover/files.py), without walking the written tree.

Every file of a commit is one git tracks, and `check` never lets a .gitignore hide a tracked file (nor the
directory holding one), so .gitignore plays no part here; the rest is the walk's: `--exclude` patterns, the
directories always skipped, vendored directories (by name, or a submodule: a gitlink, an empty directory in a
checkout), `scan_dirs`, links never followed, and each file's kind from its path."""
from __future__ import annotations

import time
from pathlib import Path

import pathspec

from auditor.run.discover.files import Discovery, descends_into
from auditor.history.gitobjects import Tree
from auditor.match.inputs.kinds import BY_NAME, classify, refine
from auditor.run.pipeline.context import Discovered
from auditor.run.pipeline.options import PREPASS_SECONDS, ScanOptions
from auditor.model.rocmpath.pulled import pulled_in_build_files
from auditor.types import SourceFile
from auditor.util.escape import visible


def discovered_point(tree: Tree, written: frozenset[str], prefix: str, root: Path, options: ScanOptions,
                     kinds: Kinds | None = None) -> Discovered:
    """What pipeline.discover_run gives for `root` (the written tree, at `prefix` in the repository), from the
    listing. `written`: the files on disk (a name that could not be written is not there in the walk either);
    `kinds`: each path's kind as its name gives it, kept by `history` across its points."""
    found = discover_listing(tree, written, prefix, root, options, kinds)
    deadline = time.monotonic() + PREPASS_SECONDS
    pulled_in = tuple(pulled_in_build_files(found.files, root, found.vendored, deadline))
    return Discovered(found, pulled_in, deadline)


Kinds = dict[str, tuple[str, str | None]]      # path -> (as shown, its kind from the path alone)


def discover_listing(tree: Tree, written: frozenset[str], prefix: str, root: Path, options: ScanOptions,
                     kinds: Kinds | None = None) -> Discovery:
    base = f"{prefix}/" if prefix else ""

    def under(paths) -> list[str]:
        return [p[len(base):] for p in paths if p.startswith(base)]

    gitlinks = under(tree.gitlinks)
    walk = _Walk(root, pathspec.GitIgnoreSpec.from_lines(list(options.exclude)), frozenset(options.scan_dirs),
                 None if options.include_vendored else set(gitlinks))
    for path in gitlinks:            # an empty directory in a checkout: recorded as vendored when walked
        walk.entered(path)
    for path in under(tree.links):   # never followed, but the walk enters their directories
        walk.entered(path.rpartition("/")[0])
    kinds = {} if kinds is None else kinds
    files = []
    for path in under(p for p in tree.files if p in written):
        parent = path.rpartition("/")[0]
        if (not parent or walk.entered(parent)) and not walk.exclude.match_file(path):
            shown, kind = kinds.get(path) or kinds.setdefault(path, (visible(path), classify(path)))
            if kind is not None and BY_NAME[kind].refine is not None:     # read (bounded) to tell
                kind = refine(kind, root / path)
            if kind:
                files.append(SourceFile(shown, f"{root}/{path}", kind))
    return Discovery(tuple(sorted(files, key=lambda s: s.path)), (), str(root), tuple(sorted(walk.vendored)))


class _Walk:
    """Which directories the walk enters, each decided once, parents first; the vendored ones it records."""

    def __init__(self, root: Path, exclude: pathspec.PathSpec, scan_dirs: frozenset[str],
                 submodules: set[str] | None):
        self.root, self.exclude, self.scan_dirs = root, exclude, scan_dirs
        self.vendoring: tuple[set[str], list[str]] | None = (submodules, []) if submodules is not None else None
        self.decided: dict[str, bool] = {"": True}

    @property
    def vendored(self) -> list[str]:
        return self.vendoring[1] if self.vendoring is not None else []

    def entered(self, directory: str) -> bool:
        known = self.decided.get(directory)
        if known is not None:
            return known
        parent, _, name = directory.rpartition("/")
        verdict = self.entered(parent) and not self.exclude.match_file(directory + "/") and descends_into(
            name, self.root / directory, directory, self.vendoring, self.scan_dirs, tracked=True)
        self.decided[directory] = verdict
        return verdict
