"""Files a scanned C/C++/CUDA file #includes, whatever their names: the compiler reads `#include "k.txt"` as
code, so the scan reads it too, as the kind of the file that includes it (CUDA when any includer is CUDA).

An include names a file relative to the including file's directory or to an include directory the build adds
(`-I`), which discovery does not know: a file whose path ends with the included name counts, so a kernel cannot
hide behind an unusual name in any directory of the tree. Files included by included files count too."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from auditor.match.inputs.kinds import BY_NAME
from auditor.types import SourceFile
from auditor.util.boundedio import read_prefix

INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*["<]([^">\r\n]{1,4096})[">]', re.MULTILINE)
READ_CAP = 16 * 1024 * 1024   # what the scan reads of a file by default; a larger file is the scan's to refuse


def included_files(sources: Sequence[SourceFile], unclaimed: Mapping[str, str]) -> list[SourceFile]:
    """The `unclaimed` files (path -> absolute path: regular files no kind claimed by name) that a C-family
    file of `sources`, or one of these, includes; each as the kind of a file that includes it."""
    if not unclaimed:
        return []
    by_name: dict[str, list[str]] = {}
    for path in unclaimed:
        by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    claimed: dict[str, SourceFile] = {}
    pending = [s for s in sources if BY_NAME[s.kind].c_family]
    while pending:
        source = pending.pop()
        for path in _included(source, by_name):
            known = claimed.get(path)
            if known is None or (known.kind != "cuda" and source.kind == "cuda"):
                claimed[path] = SourceFile(path, unclaimed[path], source.kind)
                pending.append(claimed[path])
    return sorted(claimed.values(), key=lambda s: s.path)


def _included(source: SourceFile, by_name: Mapping[str, list[str]]) -> set[str]:
    try:
        data = read_prefix(source.abspath, READ_CAP)
    except OSError:
        return set()   # the scan reports a file it cannot read
    if b"include" not in data:
        return set()
    data = data.replace(b"\r", b"\n")   # a lone CR ends a line for the compiler (auditor/parse/sourcetext.py)
    here = posixpath.dirname(source.path)
    out: set[str] = set()
    for m in INCLUDE.finditer(data):
        name = m.group(1).decode("utf-8", "replace").strip()
        candidates = by_name.get(posixpath.basename(name))
        if not candidates:
            continue
        beside = posixpath.normpath(posixpath.join(here, name))
        tail = "/" + posixpath.normpath(name).lstrip("./")
        out.update(p for p in candidates if p == beside or ("/" + p).endswith(tail))
    return out
