"""What the fixers need to know about the whole project: the warp functions its own HIP shim redefines (a mask
passed to those is dropped on ROCm, so fixing it changes nothing), and the oldest Python its users run."""
from __future__ import annotations

import posixpath
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from auditor.fix.calls import constants, merged_constants
from auditor.fix.compat import HEADER_SUFFIXES, choose_home, shim_kind
from auditor.fix.edits import FixContext
from auditor.fix.include_paths import cmake_include_dirs, python_include_dirs
from auditor.fix.lanes import (enclosing_function_name, lane_limited_calls, tensor_core_use, unparsed_regions,
                               unseen_use)
from auditor.parse.cuda import parse
from auditor.run.scan.file import InputError, read_bytes
from auditor.types import SourceFile

DEFAULT_PYTHON = (3, 8)   # when the project does not say: the oldest Python still common in CUDA projects
_SHIM = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+(__shfl(?:_up|_down|_xor)?_sync|__ballot_sync|__any_sync|__all_sync"
                   rb"|__syncwarp|__reduce_\w+_sync)[ \t]*\(", re.MULTILINE)
_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_LOWER_BOUND = re.compile(r">=\s*(\d+)\.(\d+)|~=\s*(\d+)\.(\d+)|==\s*(\d+)\.(\d+)")


def fix_context(files: Sequence[SourceFile], max_bytes: int, helpers: frozenset[str] = frozenset(),
                defining: Sequence[str] = ()) -> FixContext:
    """`helpers`: the functions around the masks a fix may change; where any file calls them lane-limited is
    looked up for these only (the rest of the project's calls do not matter). `defining`: the files whose fixes
    may use the fixer's definitions, which go into one header (auditor/fix/compat.py)."""
    shims: dict[str, str] = {}
    limited: dict[str, str] = {}
    beyond_group: dict[str, str] = {}
    python = DEFAULT_PYTHON
    includes: dict[str, list[bytes]] = {}
    tensor_core: set[str] = set()
    homes: dict[str, list[str]] = {"own": [], "shim": []}
    include_dirs: list[str] = []     # what the project's build files put on the include path (for --verify)
    defined: list[dict[bytes, int]] = []
    needles = [name.encode() for name in helpers]
    for source in files:
        if source.kind in ("cuda", "cpp"):
            data = _read(source, max_bytes)
            includes[source.path] = _QUOTED_INCLUDE.findall(data)
            defined.append(constants(data))
            if source.path.endswith(HEADER_SUFFIXES) and (kind := shim_kind(data)):
                homes[kind].append(source.path)
            if tensor_core_use(data):
                tensor_core.add(source.path)
            if any(needle in data for needle in needles):
                root = parse(data).tree.root_node
                for name, where in lane_limited_calls(root, helpers).items():
                    limited.setdefault(name, f"{source.path} {where}")
                for name, where in lane_limited_calls(root, helpers, in_group=True).items():
                    beyond_group.setdefault(name, f"{source.path} {where}")
                regions = unparsed_regions(root)   # a call there is not seen as one: its lanes are not known
                for needle in needles if regions else ():
                    if unseen := unseen_use(needle, regions):
                        why = f"{source.path} {unseen}: named in code that did not parse"
                        limited.setdefault(needle.decode(), why)
                        beyond_group.setdefault(needle.decode(), why)
            for match in _SHIM.finditer(data):
                line = data.count(b"\n", 0, match.start()) + 1
                shims.setdefault(match.group(1).decode(), f"{source.path}:{line}")
        elif PurePosixPath(source.path).name == "pyproject.toml" and "/" not in source.path:
            python = requires_python(_read(source, max_bytes).decode("utf-8", "replace")) or python
        name = PurePosixPath(source.path).name
        if name == "CMakeLists.txt" or name.endswith(".cmake"):
            include_dirs += cmake_include_dirs(_read(source, max_bytes).decode("utf-8", "replace"), source.path)
        elif name == "setup.py":
            include_dirs += python_include_dirs(_read(source, max_bytes).decode("utf-8", "replace"), source.path)
    return FixContext(shims, limited, beyond_group, python, tensor_core_only(includes, tensor_core),
                      compat_header=choose_home(defining, includes, homes["shim"], homes["own"]),
                      includers={h: tuple(sorted(found)) for h, found in includers(includes).items()},
                      include_dirs=tuple(dict.fromkeys(include_dirs)), constants=merged_constants(defined))


def tensor_core_only(includes: Mapping[str, Sequence[bytes]], tensor_core: set[str]) -> dict[str, str]:
    """Headers that only tensor-core files include (header -> those files): a port rewrites those kernels, and
    with them what they include."""
    return {header: ", ".join(sorted(found)[:3]) + (" ..." if len(found) > 3 else "")
            for header, found in includers(includes).items() if found <= tensor_core}


def includers(includes: Mapping[str, Sequence[bytes]]) -> dict[str, set[str]]:
    """header -> the project files that include it. An include is matched relative to its file and, for an
    include path (-I), by the end of any project file's path, so a header some other file may include is never
    missed."""
    by_name: dict[str, list[str]] = {}
    for header in includes:
        by_name.setdefault(posixpath.basename(header), []).append(header)
    users: dict[str, set[str]] = {}
    for path, names in includes.items():
        for raw in names:
            name = raw.decode("utf-8", "replace")
            relative = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
            for header in by_name.get(posixpath.basename(name), ()):
                if header == relative or ("/.." not in "/" + name and ("/" + header).endswith("/" + name)):
                    users.setdefault(header, set()).add(path)
    return users


def mask_helpers(planned: Sequence[tuple[SourceFile, Sequence[int]]], max_bytes: int) -> frozenset[str]:
    """The names of the functions around these (file, byte offsets of mask findings)."""
    names: set[str] = set()
    for source, offsets in planned:
        data = _read(source, max_bytes)
        root = parse(data).tree.root_node
        names.update(n for n in (enclosing_function_name(root, o) for o in offsets) if n)
    return frozenset(names)


def requires_python(pyproject: str) -> tuple[int, int] | None:
    """The lowest Python a `[project] requires-python` admits, e.g. ">=3.9" -> (3, 9)."""
    try:
        spec = tomllib.loads(pyproject).get("project", {}).get("requires-python")
    except tomllib.TOMLDecodeError:
        return None
    if not isinstance(spec, str):
        return None
    bounds = [tuple(int(g) for g in match.groups() if g is not None) for match in _LOWER_BOUND.finditer(spec)]
    found = [b for b in bounds if len(b) == 2 and b[0] == 3]
    return (3, min(b[1] for b in found)) if found else None


def _read(source: SourceFile, max_bytes: int) -> bytes:
    try:
        return read_bytes(source, max_bytes)
    except InputError:
        return b""
