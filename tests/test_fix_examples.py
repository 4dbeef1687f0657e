"""Every fix's before/after examples (rules/fixes/*.toml): the rule reports `before`, `rocm-audit fix --unsafe`
turns it into `after` exactly, and the rule no longer reports it there."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.run.pipeline import ScanOptions
from auditor.fix.apply import run_fix, write_all
from auditor.fix.data import FixDataError, load_fixes, shipped_fixes
from auditor.match.rulebook import load_rulebook

pytestmark = pytest.mark.slow   # every fix example, and nvcc where installed

RULEBOOK = load_rulebook()
SPECS = shipped_fixes()
CASES = [pytest.param(spec, i, id=f"{spec.rule}-{i}") for spec in SPECS.values() for i in range(len(spec.examples))]


def _fix(tmp_path: Path, file: str, code: str, unsafe: bool = True, beside: bool = False):
    """The fixed text: of the file, or (`beside`) of the ROCm variant made beside it, the file left as it was."""
    target = tmp_path / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(code, encoding="utf-8")
    run = write_all(run_fix([tmp_path], RULEBOOK, SPECS, unsafe=unsafe), [tmp_path], RULEBOOK, ScanOptions())
    if not beside:
        return run, target.read_text(encoding="utf-8")
    assert target.read_text(encoding="utf-8") == code, "a beside fix edited the file itself"
    made = [o for o in run.files if o.beside == file and o.changed]
    return run, (tmp_path / made[0].path).read_text(encoding="utf-8") if made else code


@pytest.mark.parametrize(("spec", "index"), CASES)
def test_fix_example(tmp_path, spec, index):
    example = spec.examples[index]
    run, fixed = _fix(tmp_path, example.file, example.before, beside=spec.beside)
    assert any(f.rule_id == spec.rule for f in run.before.findings), f"{spec.rule} does not report the example"
    assert fixed == example.after
    remaining = [f for f in run.after.findings if f.rule_id == spec.rule and not f.guarded]
    if spec.beside:   # the variant holds none of the fixed findings; the file keeps its own
        assert not [f for f in remaining if f.path != example.file]
    elif spec.removes_finding:
        assert len(remaining) < sum(1 for f in run.before.findings if f.rule_id == spec.rule)
    applied = [f for o in run.files for f in o.applied]
    assert applied and all(f.rule_id in SPECS for f in applied)


@pytest.mark.parametrize(("spec", "index"), CASES)
def test_fix_is_stable(tmp_path, spec, index):
    """Fixing the fixed text again changes nothing (no second macro, no double rewrite)."""
    example = spec.examples[index]
    _, fixed = _fix(tmp_path, example.file, example.after, beside=spec.beside)
    assert fixed == example.after


def test_unsafe_fixes_need_the_flag(tmp_path):
    unsafe = next(s for s in SPECS.values() if s.safety == "unsafe")
    example = unsafe.examples[0]
    run, fixed = _fix(tmp_path, example.file, example.before, unsafe=False)
    assert fixed == example.before
    assert run.unsafe_left >= 1


def test_every_fix_names_a_rule_and_the_rule_loader_skips_fix_files():
    ids = {r.id for r in RULEBOOK.rules}
    assert set(SPECS) <= ids
    assert not any(r.source_file.startswith("fixes/") for r in RULEBOOK.rules)


def test_malformed_fix_file_is_an_error(tmp_path):
    (tmp_path / "fixes").mkdir()
    (tmp_path / "fixes" / "bad.toml").write_text('[[fix]]\nrule = "RA200"\naction = "rename"\nsafety = "safe"\n'
                                                 'summary = "x"\nwhy = "y"\n')
    with pytest.raises(FixDataError, match="unknown action 'rename'"):
        load_fixes(tmp_path)


# --- the fixed CUDA examples compile: with nvcc, and with hipcc after hipify --------------------------------------
import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402

NVCC = shutil.which("nvcc")
HIPCC = shutil.which("hipcc")
HIPIFY = os.environ.get("ROCM_AUDIT_HIPIFY_PERL") or shutil.which("hipify-perl")
SHIM = Path(__file__).parent / "data" / "hip_sync_shim.h"
CUDA_CASES = [c for c in CASES if c.values[0].engine == "cuda"]
HIP_FAILS_BEFORE = {"RA200", "RA830"}   # what the fix is for: without it the HIP build fails


def _compile(command: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize(("spec", "index"), CUDA_CASES)
def test_fixed_example_compiles_with_nvcc(tmp_path, spec, index):
    source = tmp_path / "example.cu"
    source.write_text(spec.examples[index].after)
    done = _compile([NVCC, "-std=c++17", "-arch=sm_80", "-c", str(source), "-o", str(tmp_path / "x.o")])
    assert done.returncode == 0, done.stderr[-3000:]


def _hipified(code: str, tmp_path: Path) -> Path:
    """hipify-perl's output when it is installed (ROCM_AUDIT_HIPIFY_PERL or PATH); otherwise the examples' one CUDA
    name, the cuda_runtime.h include, is what there is to translate."""
    cuda = tmp_path / "example.cu"
    cuda.write_text(code)
    if HIPIFY:
        code = subprocess.run(["perl", HIPIFY, str(cuda)], capture_output=True, text=True, check=True).stdout
    else:
        code = code.replace("#include <cuda_runtime.h>", "#include <hip/hip_runtime.h>")
    hip = tmp_path / "example.hip.cpp"
    hip.write_text(code)
    return hip


def _hipcc(source: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HIP_PLATFORM": "amd"}
    return subprocess.run([HIPCC, "--offload-arch=gfx90a", "-std=c++17", "-include", str(SHIM), "-c", str(source),
                           "-o", str(tmp_path / "x.o")], capture_output=True, text=True, timeout=600, env=env)


@pytest.mark.skipif(HIPCC is None, reason="hipcc is not installed (apt-get install hipcc libamdhip64-dev)")
@pytest.mark.parametrize(("spec", "index"), CUDA_CASES)
def test_fixed_example_compiles_with_hipcc(tmp_path, spec, index):
    example = spec.examples[index]
    after = _hipcc(_hipified(example.after, tmp_path), tmp_path)
    assert after.returncode == 0, after.stderr[-3000:]
    if spec.rule in HIP_FAILS_BEFORE:
        before = _hipcc(_hipified(example.before, tmp_path), tmp_path)
        assert before.returncode != 0, "the unfixed example should not compile for AMD"
