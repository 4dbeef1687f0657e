"""`fix` reconciles with `check`: the fixer's definitions live in one header (or the project's HIP shim) that every
touched file includes, they are never findings, "Fixed N" and "Remaining M" are what `check` counts before and
after, the --unsafe hint counts what --unsafe fixes, and `fix --diff` is planned from one discovery, one build
model and one analysis."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import auditor.run.pipeline.context as pipeline_context
from auditor.cli.app import main
from auditor.fix.apply import run_fix
from auditor.fix.data import shipped_fixes
from auditor.run.pipeline import ScanOptions
from auditor.match.rulebook import load_rulebook
from tests.conftest import FIXTURES, write_tree

pytestmark = pytest.mark.slow   # fix and check end to end

RULEBOOK = load_rulebook()
ROCM_PATH_FIXTURES = sorted(p.name for p in (FIXTURES / "rocm_paths").iterdir() if p.is_dir())
WARP_SUM = ("__device__ float warp_sum(float v) {\n"
            "  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n  return v;\n}\n")
KERNEL = ('#include <cuda_runtime.h>\n#include "{header}"\n'
          "__global__ void k(float* x) {{ x[threadIdx.x] = {call}(x[threadIdx.x]); }}\n")


def _check(capsys, root: Path) -> dict:
    main(["check", str(root), "--format", "json", "--no-progress", "--fail-on", "never"])
    return json.loads(capsys.readouterr().out)


def _several_files(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", {
        "csrc/a/sum.cuh": "#pragma once\n#include <cuda_runtime.h>\n" + WARP_SUM,
        "csrc/a/k1.cu": KERNEL.format(header="sum.cuh", call="warp_sum"),
        "csrc/b/k2.cu": "#include <cuda_runtime.h>\n" + WARP_SUM.replace("warp_sum", "warp_sum2")
        + "__global__ void k2(float* x) { x[threadIdx.x] = warp_sum2(x[threadIdx.x]); }\n",
        "csrc/b/deep/k3.cu": "#include <cuda_runtime.h>\n#include <cstdio>\n"
        "__global__ void k3(float* x) {\n  float v = x[threadIdx.x];\n  v += __shfl_down_sync(~0u, v, 1, 32);\n"
        "  x[threadIdx.x] = v;\n}\n",
    })


def test_the_definitions_go_into_one_header_every_touched_file_includes_and_check_agrees(tmp_path, capsys):
    root = _several_files(tmp_path)
    breaking_before = _check(capsys, root)["summary"]["would_break"]
    assert main(["fix", str(root), "--no-progress", "--fail-on", "never"]) == 0
    out = capsys.readouterr().out
    header = root / "csrc/rocm_audit_compat.h"
    assert header.read_text().count("#define ROCM_AUDIT_FULL_MASK __activemask()") == 1
    assert "  csrc/rocm_audit_compat.h (new: the definitions the fixes use, included by the fixed files)" in out
    sum_header = (root / "csrc/a/sum.cuh").read_text()
    assert sum_header.startswith('#pragma once\n#include <cuda_runtime.h>\n#include "../rocm_audit_compat.h"\n'
                                 "#line 3\n")
    assert '#include "../rocm_audit_compat.h"\n#line 2\n' in (root / "csrc/b/k2.cu").read_text()
    assert '#include <cstdio>\n#include "../../rocm_audit_compat.h"\n#line 3\n' in \
        (root / "csrc/b/deep/k3.cu").read_text()
    for path in ("csrc/a/sum.cuh", "csrc/b/k2.cu", "csrc/b/deep/k3.cu"):
        assert "#ifndef ROCM_AUDIT_FULL_MASK" not in (root / path).read_text()
    assert (root / "csrc/a/k1.cu").read_text() == KERNEL.format(header="sum.cuh", call="warp_sum")
    fixed = int(re.search(r"Fixed (\d+) finding", out).group(1))
    after = _check(capsys, root)
    assert fixed == 3 and after["summary"]["would_break"] == breaking_before - fixed
    assert f"Remaining after fixing: {after['summary']['would_break']} finding(s) would break" in out
    # the fixer's own definitions are no finding of the tool, not even a guarded one
    assert not [f for f in after["findings"] if f["path"] == "csrc/rocm_audit_compat.h"]


SHIM = ("// the project's HIP compatibility header\n#ifndef COMMON_COMPAT_CUH\n#define COMMON_COMPAT_CUH\n"
        "#if defined(__HIP_PLATFORM_AMD__)\n#define WARP_SIZE 64\n#else\n#define WARP_SIZE 32\n#endif\n"
        "#endif  // COMMON_COMPAT_CUH\n")


def test_a_projects_hip_shim_every_touched_file_includes_holds_the_definitions(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {
        "common/compat.cuh": SHIM,
        "ops/k1.cu": '#include "../common/compat.cuh"\n' + WARP_SUM,
        "ops/k2.cu": '#include "common/compat.cuh"\n' + WARP_SUM.replace("warp_sum", "warp_sum2"),
    })
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    shim = (root / "common/compat.cuh").read_text()
    assert shim.startswith(SHIM.rsplit("#endif  // COMMON_COMPAT_CUH", 1)[0] + "#ifndef ROCM_AUDIT_FULL_MASK")
    assert shim.endswith("#endif  // COMMON_COMPAT_CUH\n")
    for name in ("k1.cu", "k2.cu"):   # only the mask changes: the shim is included already
        text = (root / "ops" / name).read_text()
        assert "#line" not in text and "rocm_audit_compat" not in text and "ROCM_AUDIT_FULL_MASK, v, o)" in text
    assert not (root / "ops/rocm_audit_compat.h").exists() and not (root / "rocm_audit_compat.h").exists()
    assert "  common/compat.cuh (the definitions the fixes use added, included by the fixed files)" in out
    assert not [f for f in _check(capsys, root)["findings"] if f["path"] == "common/compat.cuh"]


def test_a_later_fix_run_includes_the_header_an_earlier_one_made(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"k/one.cu": WARP_SUM})
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    made = (root / "k/rocm_audit_compat.h").read_text()
    (root / "k/two.cu").write_text(WARP_SUM.replace("warp_sum", "warp_sum2"))
    capsys.readouterr()
    main(["fix", str(root), "--no-progress", "--fail-on", "never"])
    assert (root / "k/rocm_audit_compat.h").read_text() == made
    assert (root / "k/two.cu").read_text().startswith('#include "rocm_audit_compat.h"\n#line 1\n')


def test_fix_diff_reads_the_tree_once(tmp_path, monkeypatch):
    """One discovery, one build model, one analysis: the fixes are planned from `check`'s run and checked by
    scanning the edited files again in memory (no build file is edited)."""
    root = _several_files(tmp_path)
    counts = {"discover": 0, "read_project": 0, "build_report": 0}
    for name in counts:
        real = getattr(pipeline_context, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(pipeline_context, name, counted)
    run = run_fix([root], RULEBOOK, shipped_fixes(), ScanOptions(jobs=1))
    assert run.applied == 3 and not [o for o in run.files if o.rolled_back]
    assert counts == {"discover": 1, "read_project": 1, "build_report": 1}


@pytest.mark.parametrize("name", ROCM_PATH_FIXTURES)
def test_fix_diff_and_the_fixed_tree_agree_with_check(tmp_path, capsys, name):
    root = tmp_path / name
    shutil.copytree(FIXTURES / "rocm_paths" / name, root)
    check_code = main(["check", str(root), "--no-progress"])
    capsys.readouterr()
    before = _check(capsys, root)["summary"]["would_break"]
    diff_code = main(["fix", str(root), "--diff", "--no-progress"])
    err = capsys.readouterr().err
    assert diff_code == check_code
    assert f"Remaining now: {before} finding(s) would break on ROCm" in err
    hinted = re.search(r"(\d+) more finding\(s\) have a fix that needs review: add --unsafe", err)
    safe = int(re.search(r"Would fix (\d+) finding", err).group(1))
    main(["fix", str(root), "--diff", "--unsafe", "--no-progress"])
    unsafe = int(re.search(r"Would fix (\d+) finding", capsys.readouterr().err).group(1))
    assert unsafe - safe == (int(hinted.group(1)) if hinted else 0)   # the hint counts what --unsafe fixes
    main(["fix", str(root), "--unsafe", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    after = _check(capsys, root)
    assert f"Remaining after fixing: {after['summary']['would_break']} finding(s) would break" in out
    assert not [f for f in after["findings"] if f["path"].endswith("rocm_audit_compat.h")]


LOADER = ('import torch\nfrom torch.utils.cpp_extension import load\n\n'
          'lib = load(\n    name="ops_lib",\n    sources=["ops.cu"],\n    extra_cuda_cflags=[\n        "-O3",\n'
          '        "--expt-relaxed-constexpr",\n        "--use_fast_math",\n    ],\n)\n')


def test_an_evidence_change_from_a_python_fix_rolls_back_that_fix_not_the_kernels(tmp_path, capsys):
    """nvcc-only flags put behind `torch.version.hip is None` read as ROCm-path evidence, so that fix is rolled
    back; the kernel's mask fix, which moves no evidence, is kept (with the findings the evidence moved, it was
    rolled back too)."""
    kernel = ("#include <cuda_runtime.h>\n" + WARP_SUM + "__global__ void k(float* x) {\n  float v = warp_sum(x[0]);\n"
              "  if (threadIdx.x < 7) v = __shfl_down_sync(0xffffffff, v, 1);\n  x[threadIdx.x] = v;\n}\n")
    root = write_tree(tmp_path / "repo", {"ops/ops.py": LOADER, "ops/ops.cu": kernel})
    main(["fix", str(root), "--unsafe", "--no-progress", "--fail-on", "never"])
    out = capsys.readouterr().out
    assert "ops/ops.cu: RA200 x1" in out
    assert "__shfl_xor_sync(ROCM_AUDIT_FULL_MASK, v, o)" in (root / "ops/ops.cu").read_text()
