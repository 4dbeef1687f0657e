"""One three-valued evaluator of Python tests on ROCm (truth/python.rocm_truth): the Python engine's guards
and the build reader (model/rocmpath/pytruth.Truth) combine `not`, `and`/`or` and `is None` the same way, and a test
nested deeper than MAX_TEST_DEPTH is unknown to both rather than a recursion error."""
from __future__ import annotations

import ast

from auditor.truth.python import MAX_TEST_DEPTH
from auditor.model.rocmpath.pytruth import Truth
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

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


SETUP = (
    "import accel.backend\n"
    "from torch.utils.cpp_extension import CUDAExtension, setup\n"
    "if accel.backend.IS_MI300:\n"
    "    flags = ['--offload-arch=gfx942']\n"
    "else:\n"
    "    flags = ['-gencode=arch=compute_90,code=sm_90']\n"
    "setup(ext_modules=[CUDAExtension('k', ['k.cu'], extra_compile_args={'nvcc': flags})])\n"
)
MODULE = "import accel.backend\nif accel.backend.IS_MI300:\n    pass\nelse:\n    import pycuda.driver\n"


def test_a_switch_added_only_to_the_data_file_reaches_engine_and_build_reader(tmp_path):
    """guards.toml is the one place the Python switches are named: a name added there (and nowhere else) is true
    on ROCm for the Python engine and for the build reader alike."""
    import shutil

    from auditor.model.rocmpath.pybuild import read_python_build
    from auditor.match.rulebook import rules_root

    root = tmp_path / "rules"
    shutil.copytree(rules_root(), root)
    guards = root / "guards.toml"
    text = guards.read_text()
    line = next(x for x in text.splitlines() if x.startswith("rocm_true_names = ["))
    guards.write_text(text.replace(line, line.replace("[", '["accel.backend.IS_MI300", ', 1)))
    switched = load_rulebook(root)

    def engine_guarded(rulebook) -> dict[int, bool]:
        return {f.span.line: f.guarded for f in scan_text_as("pkg/mod.py", "python", MODULE, rulebook).findings}

    assert engine_guarded(RULEBOOK) == {5: False}
    assert engine_guarded(switched) == {5: True}
    shipped = read_python_build("setup.py", SETUP)
    assert shipped is not None and shipped.rocm_tests == []
    build = read_python_build("setup.py", SETUP, switches=switched.own_context.guards.python)
    assert build is not None and build.rocm_tests == [3] and build.cuda_lines >= {6}
