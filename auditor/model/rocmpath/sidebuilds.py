"""Extensions only a second setup script builds (`setup_cuda.py` beside the package), which pip's install never
runs: the user builds them by hand. When a shipped module imports one without a fallback, the package cannot run
without it, so its sources are required: a ROCm user builds them (hipified by ROCm PyTorch) as a CUDA user does,
and what they hold is work, not a file no build lists."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from pathlib import PurePosixPath

from auditor.parse.pyimports import unguarded_imports
from auditor.model.rocmpath.provenance import artifact_files, parent_dir, within
from auditor.model.rocmpath.pybuild import read_python_build_text
from auditor.types import SourceFile

SIDE_SETUP = re.compile(r"^setup[_-]\w+\.py$")
MAX_CHARS = 1_000_000


def required_side_builds(comp: str, mine: Sequence[SourceFile], packages: frozenset[str],
                         text_of: Callable[[str], str]) -> dict[str, str]:
    """source -> why it is required, for each extension a second setup script builds and a shipped module
    imports unconditionally."""
    builds = [b for f in mine if f.kind == "python" and SIDE_SETUP.match(PurePosixPath(f.path).name)
              and "setup(" in (text := text_of(f.path)) and len(text) <= MAX_CHARS
              and (b := read_python_build_text(f.path, text)) is not None and b.artifacts]
    if not builds:
        return {}
    wanted = {name.rsplit(".", 1)[-1]: (b, name) for b in builds for name in b.artifacts}
    # the shipped packages; with none found (a namespace package), the modules beside the second setup script
    homes = packages or frozenset(parent_dir(b.path) for b in builds)
    found: dict[str, str] = {}
    for f in mine:
        if f.kind != "python" or not any(within(f.path, p) for p in homes) or f.path in {b.path for b in builds}:
            continue
        text = text_of(f.path)
        if not any(short in text for short in wanted) or len(text) > MAX_CHARS:
            continue
        try:
            loaded = {name.rsplit(".", 1)[-1] for name in unguarded_imports(ast.parse(text))}
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for short in loaded & set(wanted):
            build, name = wanted[short]
            why = (f"only {build.path} builds `{name}`, which pip's install never runs, and {f.path} imports it "
                   "without a fallback: the package needs it built")
            for path in artifact_files(comp, build, name, mine):
                found.setdefault(path, why)
    return found
