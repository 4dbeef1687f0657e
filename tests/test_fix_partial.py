"""A file that parsed only in part (a macro shape the grammar cannot read): its masks are fixed per function,
where the function parsed completely and no unparsed code names it (a call there is not seen as a call, so the
lanes it runs with are not known); the fixes that need the whole file are not made there."""
from __future__ import annotations

import pytest

from auditor.cli.app import main
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # fix end to end on partly parsed trees

# a missing `;` and a stray brace: the parser gives up on the statement, and the call in it is not seen as a call
UNREADABLE_CALLER = "__global__ void g(float* o) { if (threadIdx.x < 7) o[0] = warp_sum(1.f) } }\n"
HELPER = ("#include <cuda_runtime.h>\n__device__ float warp_sum(float v) {\n"
          "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n")
KERNEL = "__global__ void k(float* out) { out[threadIdx.x] = warp_sum(out[threadIdx.x]); }\n"


def _fix(root) -> str:
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    return (root / "k.cu").read_text()


def test_a_mask_in_a_function_that_parsed_is_fixed_in_a_partly_parsed_file(tmp_path, capsys):
    text = HELPER + "int unreadable( = ) ) { return 0; }\n" + KERNEL
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    fixed = _fix(root)
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, o)" in fixed
    assert "int unreadable( = ) ) { return 0; }\n" in fixed          # the unparsed line is left as it was
    assert "k.cu: RA200 x1" in capsys.readouterr().out


def test_a_helper_named_in_unparsed_code_is_not_fixed(tmp_path, capsys):
    text = HELPER + UNREADABLE_CALLER + KERNEL
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    assert _fix(root) == text
    assert ("k.cu:3: RA200 the file parsed only in part and warp_sum is named in code that did not parse (line 6): "
            "the lanes there are not known") in capsys.readouterr().out


def test_a_helper_named_in_another_files_unparsed_code_is_not_fixed(tmp_path, capsys):
    caller = "#include \"k.cu\"\n" + UNREADABLE_CALLER
    root = write_tree(tmp_path / "repo", {"k.cu": HELPER + KERNEL, "caller.cu": caller})
    assert _fix(root) == HELPER + KERNEL
    assert "warp_sum is called from lane-limited code (caller.cu line 2: named in code that did not parse)" \
        in capsys.readouterr().out


def test_a_mask_inside_the_unparsed_function_is_not_fixed(tmp_path, capsys):
    text = ("#include <cuda_runtime.h>\n__global__ void k(float* out) {\n  int broken( = ) );\n"
            "  out[0] = __shfl_xor_sync(0xffffffff, out[0], 1);\n}\n")
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    assert _fix(root) == text
    out = capsys.readouterr().out
    assert "k.cu:4: RA200 " in out and ("did not parse" in out or "scanned only in part" in out)


def test_other_fixes_need_the_whole_file(tmp_path, capsys):
    text = ("__device__ void backoff(int* f) { while (!*f) __nanosleep(100); }\nint unreadable( = ) ) { return 0; }\n")
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    assert _fix(root) == text
    assert "k.cu:1: RA830 the file was scanned only in part" in capsys.readouterr().out


def test_the_definition_never_lands_inside_a_conditional_branch(tmp_path):
    # the shape of fixtures/coverage/graph_step.cu: an include inside `#if __has_include(...)` after the first one
    # (the conditional parses since split conditionals are read across; before, the fix was refused here)
    conditional = "#if __has_include(<cudnn.h>)\n#include <cudnn.h>\n#else\ntypedef void* h_t;\n#endif\n"
    text = "#include <cuda_runtime.h>\n" + conditional + HELPER.split("\n", 1)[1] + KERNEL
    root = write_tree(tmp_path / "repo", {"k.cu": text})
    fixed = _fix(root)
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, o)" in fixed
    assert fixed.index('#include "rocm_audit_compat.h"') < fixed.index(conditional)   # before the #if, intact
