"""C/C++ files another component's build compiles through its includes. A nested distribution's kernel may
`#include "../common.cu"` from its parent's directory; the parent's own build lists nothing that includes it, so
the file is built only when that nested distribution is: it shares the includers' place (a separate distribution
the root install does not pull in, or an optional part)."""
from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence

from auditor.model.rocmpath.provenance import C_KINDS, INCLUDE, parent_dir
from auditor.types import SourceFile
from auditor.util.purepaths import pure

NOT_ROOT = frozenset({"secondary", "optional"})
MAX_INCLUDERS = 10_000       # include edges followed per file (the walk is bounded like every other read)


def includers(files: Sequence[SourceFile], text_of: Callable[[str], str]) -> dict[str, set[str]]:
    """file -> the C/C++ files that `#include` it (resolved beside the includer first, else by name)."""
    by_name: dict[str, list[str]] = {}
    for f in files:
        by_name.setdefault(pure(f.path).name, []).append(f.path)
    found: dict[str, set[str]] = {}
    for f in files:
        for target in INCLUDE.findall(text_of(f.path)):
            beside = posixpath.normpath(posixpath.join(parent_dir(f.path), target))
            candidates = by_name.get(pure(target).name, [])
            resolved = [beside] if beside in candidates else \
                [c for c in candidates if c.endswith(target.lstrip("./"))]
            for path in resolved:
                if path != f.path:
                    found.setdefault(path, set()).add(f.path)
    return found


def included_only_by_parts(files: Sequence[SourceFile], text_of: Callable[[str], str], owner: Callable[[str], str],
                           components: Mapping[str, str], provenance: Mapping[str, str]) -> dict[str, str]:
    """file -> the component (secondary or optional) whose sources alone include it, for each C/C++ file its own
    component's build does not list (provenance `unreferenced`, or no provenance) and that only files of other,
    secondary or optional, components include (transitively through headers of its own component)."""
    c_files = [f for f in files if f.kind in C_KINDS]
    edges = includers(c_files, text_of)
    out: dict[str, str] = {}
    for f in c_files:
        own = owner(f.path)
        if provenance.get(f.path, "unreferenced") != "unreferenced" or f.path not in edges:
            continue
        seen, frontier, parts = {f.path}, [f.path], set()
        while frontier and len(seen) < MAX_INCLUDERS:
            for includer in edges.get(frontier.pop(), ()):
                if includer in seen:
                    continue
                seen.add(includer)
                comp = owner(includer)
                if comp == own:
                    frontier.append(includer)
                else:
                    parts.add(comp)
        if parts and all(components.get(c) in NOT_ROOT for c in parts):
            out[f.path] = sorted(parts)[0]
    return out


def included_only_from(sources: Mapping[str, str], edges: Mapping[str, set[str]]) -> dict[str, str]:
    """file -> the note of one of `sources` (file -> note), for each file not among them that only those sources
    include, directly or through other headers: a header compiled only as part of those sources."""
    out: dict[str, str] = {}
    for path in edges:
        if path in sources:
            continue
        seen, frontier, notes, reached_elsewhere = {path}, [path], [], False
        while frontier and not reached_elsewhere and len(seen) < MAX_INCLUDERS:
            for includer in edges.get(frontier.pop(), ()):
                if includer in seen:
                    continue
                seen.add(includer)
                if includer in sources:
                    notes.append(sources[includer])
                elif includer in edges:
                    frontier.append(includer)
                else:   # a file nobody includes and no optional build lists: compiled on its own
                    reached_elsewhere = True
                    break
        if notes and not reached_elsewhere and not frontier:
            out[path] = min(notes)
    return out
