"""One three-valued evaluator of Python tests on ROCm (engines/python/guards.rocm_truth): the Python engine's guards
and the build reader (rocmpath/pytruth.Truth) combine `not`, `and`/`or` and `is None` the same way, and a test
nested deeper than MAX_TEST_DEPTH is unknown to both rather than a recursion error."""
from __future__ import annotations

import ast

from auditor.engines.python.guards import MAX_TEST_DEPTH
from auditor.rocmpath.pytruth import Truth
from auditor.rulebook import load_rulebook
from auditor.scan import scan_text_as

RULEBOOK = load_rulebook()
COMBINED = "not (torch.version.hip is None) and (torch.version.hip or torch.version.cuda)"


def _guarded(test: str) -> dict[int, bool]:
    code = f"import torch\nif {test}:\n    pass\nelse:\n    import pycuda.driver\n"
    result = scan_text_as("pkg/mod.py", "python", code, RULEBOOK)
    assert result.error is None
    return {f.span.line: f.guarded for f in result.findings}


def test_engine_and_build_reader_agree_on_a_combined_test():
    assert Truth(set()).of(ast.parse(COMBINED, mode="eval").body) is True
    assert _guarded(COMBINED) == {5: True}      # the else branch is CUDA's: guarded


def test_a_test_nested_too_deep_is_unknown_to_both():
    deep = "not " * (MAX_TEST_DEPTH + 2) + "torch.version.hip"
    assert Truth(set()).of(ast.parse(deep, mode="eval").body) is None
    assert _guarded(deep) == {5: False}         # unknown: the import is live
    shallow = "not not torch.version.hip"
    assert Truth(set()).of(ast.parse(shallow, mode="eval").body) is True and _guarded(shallow) == {5: True}
