"""How many of a tree's C/C++/CUDA files tree-sitter-cuda reads only in part: before (the raw grammar, any error
node) and after rocm-audit's reading (macro shapes blanked, a supplied MISSING token not counted), as a share
of the files a scan covers. Usage: python scripts/partial_share.py TREE…  (the issue's numbers came from apex,
flash-attention, DeepSpeed and ggml checkouts)."""
from __future__ import annotations

import sys
from pathlib import Path

import tree_sitter as ts
import tree_sitter_cuda

from auditor.run.discover.files import classify
from auditor.parse import cuda
from auditor.run.pipeline import audit
from auditor.match.rulebook import load_rulebook


def share(tree: Path) -> str:
    report = audit([tree], load_rulebook())
    raw = ts.Parser(ts.Language(tree_sitter_cuda.language()))
    before = after = 0
    for result in report.results:
        if classify(result.path) not in ("cuda", "cpp"):
            continue
        source = (tree / result.path).read_bytes()
        before += raw.parse(source).root_node.has_error
        after += cuda.parse(source).partial
    files = len(report.results) or 1
    return (f"{tree}: {len(report.results)} files scanned; parsed in part before {before} "
            f"({100 * before / files:.1f}%), after {after} ({100 * after / files:.1f}%)")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(share(Path(name)))
