"""The floor a scan is compared with: reading every file rocm-audit discovers, one tree-sitter parse
of each C/C++/CUDA file and one `ast.parse` of each Python file, in CPU seconds.

    .venv/bin/python scripts/floor.py DIR...    # then: rocm-audit DIR -j 1 --no-cache, timed with /usr/bin/time
"""
from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

from auditor.run.discover.files import discover
from auditor.parse.cuda import parse


def floor(root: Path) -> tuple[int, float]:
    start = time.process_time()
    files = 0
    for source in discover([root], root).files:
        try:
            data = Path(source.abspath).read_bytes()
        except OSError:
            continue
        files += 1
        if source.kind in ("cuda", "cpp"):
            parse(data)
        elif source.kind == "python":
            try:
                ast.parse(data)
            except (SyntaxError, ValueError, RecursionError):
                pass
    return files, time.process_time() - start


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        count, seconds = floor(Path(arg))
        print(f"{Path(arg).name}: {count} files, floor {seconds:.2f} CPU s")
