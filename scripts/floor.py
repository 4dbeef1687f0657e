"""The floor a scan is compared with: reading every file rocm-audit discovers and parsing each source file once,
in CPU seconds. One tree-sitter-cuda parse of each C/C++/CUDA file (its bytes as read, no macro blanking, no
reading across conditionals, no re-parse past broken lines: those are the scan's own work, part of what is
measured against the floor) and one `ast.parse` of each Python file; every other file is only read.

    .venv/bin/python scripts/floor.py DIR...          # then compare: rocm-audit check DIR -j 1 --no-cache
    .venv/bin/python scripts/floor.py --json DIR...   # one JSON object per tree

The files are the scan's own: `discover` as `rocm-audit check DIR` calls it with its default options.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
import time
import warnings
from pathlib import Path

import tree_sitter as ts
import tree_sitter_cuda

try:
    from auditor.run.discover.files import discover
except ImportError:   # an installation from before the stage folders (--command of bench_floor, for before/after)
    from auditor.discover.files import discover  # type: ignore[no-redef]

C_FAMILY = ("cuda", "cpp")


def cuda_parser() -> ts.Parser:
    return ts.Parser(ts.Language(tree_sitter_cuda.language()))


def parse_once(parser: ts.Parser, data: bytes, kind: str) -> bool:
    """The floor's one parse of a file's bytes by its kind; False for a file that is only read."""
    if kind in C_FAMILY:
        parser.parse(data)
        return True
    if kind != "python":
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return True


def floor(root: Path) -> dict[str, float | int]:
    """Files read, files parsed and CPU seconds (this process) of finding, reading and parsing the tree once."""
    parser = cuda_parser()
    start = time.process_time()
    sources = discover([root], root).files
    read = parsed = 0
    for source in sources:
        try:
            data = Path(source.abspath).read_bytes()
        except OSError:
            continue
        read += 1
        parsed += parse_once(parser, data, source.kind)
    return {"files": read, "parsed": parsed, "cpu_seconds": time.process_time() - start}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", type=Path, nargs="+")
    parser.add_argument("--json", action="store_true", help="one JSON object per tree")
    parser.add_argument("--repeat", type=int, default=1, help="measure each tree this many times, keep the least "
                        "CPU (a short floor on a busy machine varies by a third)")
    args = parser.parse_args(argv)
    for tree in args.trees:
        measured = min((floor(tree) for _ in range(max(1, args.repeat))), key=lambda m: m["cpu_seconds"])
        if args.json:
            print(json.dumps({"tree": str(tree), **measured}))
        else:
            print(f"{tree.name}: {measured['files']} files ({measured['parsed']} parsed), "
                  f"floor {measured['cpu_seconds']:.2f} CPU s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
