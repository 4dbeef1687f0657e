"""The one header the fixer's definitions live in (the full-mask macro, the sleep wrapper). A file the C/C++ fixes
touch includes it (followed by `#line`, so every later line keeps its number) instead of holding its own copy.
The header is the project's own HIP shim when it has one that every file to fix includes (a header that
defines the warp size or lane masks under a HIP condition), or the header an earlier fix run made; otherwise a
new `rocm_audit_compat.h` in the deepest directory that holds every file to fix."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence


HEADER_NAME = "rocm_audit_compat.h"
HEADER_SUFFIXES = (".h", ".hpp", ".cuh", ".hh", ".hxx", ".inl")
_QUOTED_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_HIP_CONDITION = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif)\b[^\n]*"
                            rb"(?:__HIP_PLATFORM_AMD__|__HIP_PLATFORM_HCC__|__HIP__|__HIPCC__|USE_ROCM|__HIP_DEVICE_COMPILE__)",
                            re.MULTILINE)
_WARP_MACRO = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+\w*(?:WARP_?SIZE|WARPSIZE|FULL_?MASK|WARP_?MASK|FINAL_MASK)\w*\b",
                         re.MULTILINE | re.IGNORECASE)
_OWN = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+ROCM_AUDIT_(?:FULL_MASK|NANOSLEEP)\b", re.MULTILINE)


def include_spelling(path: str, home: str) -> str:
    """How `path` (relative to the root, posix) names `home` in a quoted include: relative to its directory."""
    return posixpath.relpath(home, posixpath.dirname(path) or ".")


def includes_home(data: bytes, path: str, home: str) -> bool:
    """`data` (the start of the file at `path`) includes `home`, relative to its directory or by a path that ends
    the home's path (an include path of the project)."""
    return _names(_QUOTED_INCLUDE.findall(data), path, home)


def choose_home(planned: Sequence[str], includes: Mapping[str, Sequence[bytes]], shims: Sequence[str],
                own: Sequence[str]) -> str | None:
    """The header for the definitions the fixes in `planned` (paths of the C/C++ files to fix) may use: the header
    an earlier run made in their directory, else the project's HIP shim (`shims`) or a header of the fixer's own
    (`own`) when every planned file includes it, else a new header. `includes`: each file's quoted includes."""
    if not planned:
        return None
    directory = posixpath.commonpath([posixpath.dirname(p) for p in planned])
    made_here = posixpath.join(directory, HEADER_NAME) if directory else HEADER_NAME
    if made_here in own:
        return made_here
    for path in sorted({*own, *shims}):
        if all(p == path or _names(includes.get(p, ()), p, path) for p in planned):
            return path
    return made_here


def _names(names: Sequence[bytes], path: str, home: str) -> bool:
    return any(_same(name.decode("utf-8", "replace"), path, home) for name in names)


def _same(name: str, path: str, home: str) -> bool:
    relative = posixpath.normpath(posixpath.join(posixpath.dirname(path), name))
    return relative == home or ("/.." not in "/" + name and ("/" + home).endswith("/" + name))


def shim_kind(data: bytes) -> str | None:
    """'own' for a header of the fixer's definitions, 'shim' for a project header that defines the warp size or
    lane masks under a HIP condition, else None."""
    if _OWN.search(data):
        return "own"
    return "shim" if _HIP_CONDITION.search(data) and _WARP_MACRO.search(data) else None


def home_text(existing: str | None, needed: Sequence[str], blocks: Mapping[str, str]) -> str:
    """The home's text with the definitions `needed` that it lacks: a new header, or the project's shim with them
    added before its header guard's last `#endif` (at its end when it has none)."""
    missing = [blocks[name] for name in needed if existing is None or name not in existing]
    if existing is None:
        guard = "ROCM_AUDIT_COMPAT_H"
        return (f"// rocm-audit fix: the definitions its fixes use, in one place (CUDA and HIP)\n#ifndef {guard}\n"
                f"#define {guard}\n" + "".join(missing) + "#endif\n")
    if not missing:
        return existing
    newline = "\r\n" if "\r\n" in existing else "\n"
    added = "".join(missing).replace("\n", newline)
    last = re.search(r"^[ \t]*#[ \t]*endif\b[^\n]*\n?\s*\Z", existing, re.MULTILINE)
    if last and re.match(r"\s*(?:#\s*ifndef|#\s*if\s+!\s*defined)", _code_start(existing)):
        return existing[:last.start()] + added + existing[last.start():]
    return existing + ("" if existing.endswith(("\n", "\r")) or not existing else newline) + added


def _code_start(text: str) -> str:
    """The text from its first line that is not a comment or blank."""
    return re.sub(r"\A(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*", "", text, flags=re.DOTALL)
