"""The ROCm path (rocm-path.md): each pattern P1-P7 and each decoy in fixtures/rocm_paths/ pins its verdict, the
reason a team lead reads, and the disposition of each finding at its file and line."""
import json

import pytest

from auditor.cli.app import main
from tests.conftest import REPO

pytestmark = pytest.mark.slow   # end-to-end runs over the ROCm-path fixtures

ROOT = REPO / "fixtures" / "rocm_paths"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    out = {}
    for fixture in sorted(p for p in ROOT.iterdir() if p.is_dir()):
        target = tmp_path_factory.mktemp(fixture.name) / "report.json"
        code = main([str(fixture), "--format", "json", "-o", str(target), "--fail-on", "never", "-j", "1",
                     "--no-progress", "--no-cache"])
        assert code == 0
        out[fixture.name] = json.loads(target.read_text())
    return out


def disposition(report: dict, path: str, line: int, rule: str) -> str:
    hits = [f["disposition"] for f in report["findings"] if (f["path"], f["line"], f["rule"]) == (path, line, rule)]
    assert hits, f"no {rule} at {path}:{line}"
    return hits[0]


def patterns(report: dict) -> list[str]:
    return report["components"][0]["rocm_path"]["patterns"]


def test_p1_p4_backend_switch_is_ready_and_names_the_rocm_build(reports):
    r = reports["p1_backend_switch"]
    assert r["summary"]["verdict"] == "ready"
    reason = r["summary"]["verdict_reason"]
    assert reason.startswith("ready: ROCm build in tree: setup.py:11 switches to a ROCm build")
    assert "`--offload-arch=gfx942` at setup.py:24" in reason
    assert "setup.py:21 builds `fastattn_cuda` from other sources on ROCm" in reason
    assert "Install: `pip install --no-build-isolation .` on ROCm PyTorch" in reason
    assert {"P1", "P4"} <= set(patterns(r))
    # the PTX kernel only the CUDA branch compiles is still reported, with why it does not block
    assert disposition(r, "csrc/cuda/fwd_kernel.cu", 7, "RA301") == "cuda-only source, ROCm builds an alternative"
    # a 32-lane mask in the source the ROCm build compiles is a soft finding: verify on hardware
    assert disposition(r, "csrc/ck/fwd_ck.cu", 6, "RA200") == "verify on hardware"
    assert "Verify on hardware: 2 item(s)" in reason
    assert r["summary"]["by_disposition"]["verify on hardware"] == 2


def test_p2_cmake_hip_backend_with_a_shim_and_a_project_macro(reports):
    r = reports["p2_cmake_shim"]
    assert r["summary"]["verdict"] == "ready"
    reason = r["summary"]["verdict_reason"]
    assert "CMakeLists.txt:14 builds for HIP (`enable_language(HIP)`)" in reason
    assert "src/compat.cuh:1 maps CUDA names to HIP" in reason
    assert "Install: `cmake -B build -DGRID_HIP=ON && cmake --build build`" in reason
    assert {"P1", "P2"} <= set(patterns(r))
    # GRID_USE_HIP is defined by the HIP branch of CMake: the PTX in its #else is guarded by that project macro
    f = next(f for f in r["findings"] if f["path"] == "src/reduce.cu" and f["line"] == 14)
    assert f["disposition"] == "guarded by a project macro" and not f["would_break"] and f["severity"] == "info"
    assert "the project's own build defines" in f["disposition_note"]
    # `if(GRID_CUDA) … elseif(GRID_HIP)`: the first arm is the CUDA branch
    assert disposition(r, "CMakeLists.txt", 11, "RA603") == "CUDA branch of a build script"


def test_p3_p7_op_builders_hipify_and_fence(reports):
    r = reports["p3_op_builders"]
    assert r["summary"]["verdict"] == "ready"
    assert {"P1", "P3", "P7"} <= set(patterns(r))
    assert "op_builder/builder.py:23 runs hipify on the CUDA sources at build time" in r["summary"]["verdict_reason"]
    assert disposition(r, "csrc/sparse/sparse_attn.cu", 1, "RA404") == "optional feature"
    # an op compiled on first use through hipify: its 32-lane math is checked on hardware
    assert disposition(r, "csrc/adam/fused_adam.cu", 4, "RA203") == "verify on hardware"
    note = next(f["disposition_note"] for f in r["findings"] if f["path"] == "csrc/sparse/sparse_attn.cu")
    assert "op_builder/sparse.py:8" in note


def test_p5_p6_pure_python_dispatch_runs_as_is(reports):
    r = reports["p5_python_dispatch"]
    assert r["summary"]["verdict"] == "ready"
    reason = r["summary"]["verdict_reason"]
    assert reason.startswith("ready: Runs on ROCm PyTorch:")
    assert "gputools/device.py:7 branches on `torch.version.hip`" in reason
    assert "pyproject.toml:11 declares a ROCm extra `rocm`" in reason
    # the install recipe is read from the ROCm extra, not "pip install ." alone
    assert 'Install: `pip install ".[rocm]"`' in reason
    assert disposition(r, "gputools/device.py", 13, "RA504") == "verify on hardware"
    # `major >= 8` is a feature gate every AMD GPU passes (tests/test_persona_capability.py): no finding
    assert not [f for f in r["findings"] if f["rule"] == "RA502"]


def test_p7_makefile_opt_in_feature(reports):
    r = reports["p7_makefile_optin"]
    assert r["summary"]["verdict"] == "ready"
    assert disposition(r, "src/conv.cu", 2, "RA400") == "optional feature"
    assert disposition(r, "src/conv.cu", 12, "RA400") == "optional feature"
    assert disposition(r, "Makefile", 14, "RA624") == "optional feature"


def test_a_rocm_branch_that_only_raises_is_no_path(reports):
    r = reports["decoy_refusal"]
    assert r["summary"]["verdict"] == "blocked"
    assert r["components"][0]["rocm_build"] is False
    assert "Its ROCm branch only refuses (setup.py:5): not a ROCm path" in r["summary"]["verdict_reason"]
    assert disposition(r, "csrc/gemm.cu", 5, "RA301") == "live"


def test_a_rocm_build_that_compiles_ptx_is_a_broken_path(reports):
    r = reports["decoy_broken_path"]
    assert r["summary"]["verdict"] == "blocked"
    assert "ROCm build in tree, but broken" in r["summary"]["verdict_reason"]
    f = next(f for f in r["findings"] if (f["path"], f["line"]) == ("csrc/gemm.cu", 5))
    assert f["disposition"] == "live" and "broken path" in f["disposition_note"]


def test_a_rocm_build_of_a_helper_only_leaves_the_main_extension_blocked(reports):
    r = reports["decoy_helper_only"]
    assert r["summary"]["verdict"] == "blocked"
    assert "wgmma" in r["summary"]["verdict_reason"] and "`hopgemm_main`" in r["summary"]["verdict_reason"]
    assert disposition(r, "csrc/main_gemm.cu", 4, "RA303") == "live"
    assert r["components"][0]["rocm_path"]["artifacts"]["cuda_only"] == ["hopgemm_main"]


def test_a_shim_header_without_a_hip_build_is_no_path(reports):
    r = reports["decoy_shim_only"]
    assert r["summary"]["verdict"] == "needs-port"
    assert patterns(r) == []
    assert disposition(r, "src/ring.cu", 5, "RA300") == "live"


def test_rocm_mentions_in_tests_and_ci_are_no_path(reports):
    r = reports["decoy_rocm_in_tests"]
    assert r["summary"]["verdict"] == "needs-port"
    assert patterns(r) == [] and r["components"][0]["rocm_build"] is False
    assert disposition(r, "csrc/scan.cu", 3, "RA300") == "live"


def test_portable_package_with_optional_nvidia_integrations_is_ready(reports):
    r = reports["decoy_portable_optional"]
    assert r["summary"]["verdict"] == "ready"
    assert disposition(r, "trainkit/loop.py", 6, "RA100") == "optional"        # under if TYPE_CHECKING:
    assert disposition(r, "trainkit/loop.py", 17, "RA111") == "optional"       # after `if not is_te_available()`
    assert disposition(r, "trainkit/loop.py", 9, "RA112") == "guarded"         # try/except ImportError fallback
    # an except that re-raises is no fallback: not guarded (optional only because nothing imports the module)
    strict = next(f for f in r["findings"] if f["path"] == "trainkit/strict.py")
    assert not strict["guarded"] and strict["disposition"] == "optional"


def test_every_fixture_finding_has_a_known_disposition(reports):
    from auditor.judge.dispositions import DISPOSITIONS

    for report in reports.values():
        assert all(f["disposition"] in DISPOSITIONS for f in report["findings"])


def test_reports_follow_the_schema_with_the_new_keys(reports):
    import jsonschema

    schema = json.loads((REPO / "auditor" / "report" / "schema" / "report.schema.json").read_text())
    from auditor.judge.dispositions import DISPOSITIONS

    assert set(schema["$defs"]["disposition"]["enum"]) == set(DISPOSITIONS)
    for report in reports.values():
        jsonschema.validate(report, schema)
        assert all("rocm_path" in c and "kind" in c for c in report["components"])


def test_a_module_built_on_an_optional_nvidia_integration_is_optional_as_a_whole(tmp_path):
    """flash-attn's `cute/` modules import CuTe DSL (not a dependency, never loaded by `import flash_attn`):
    their inline PTX is part of that optional integration, not work for the ROCm port."""
    from tests.conftest import write_tree

    repo = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = 'fastkern'\ndependencies = ['torch']\n[build-system]\n"
                          "requires = ['setuptools']\n",
        "fastkern/__init__.py": "import torch\n\nIS_ROCM = torch.version.hip is not None\n",
        "fastkern/cute/helpers.py": (
            "import cutlass\n"
            "from cutlass._mlir.dialects import llvm\n"
            "\n"
            "def fast_exp2(x):\n"
            "    return llvm.inline_asm(T.f32(), [x], 'ex2.approx.ftz.f32 $0, $1;', '=f,f')\n"),
    })
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    report = json.loads(target.read_text())
    found = {(f["path"], f["line"], f["rule"]): (f["disposition"], f["disposition_note"]) for f in report["findings"]}
    ptx = [(where, d) for where, d in found.items() if where[0] == "fastkern/cute/helpers.py" and where[1] == 5]
    assert ptx and all(d[0] == "optional" and "imports it" in d[1] for _, d in ptx), found
    assert found[("fastkern/cute/helpers.py", 1, "RA136")][0] == "optional"
    assert report["summary"]["verdict"] == "ready"


def test_a_header_included_only_on_the_cuda_branch_is_not_compiled_by_the_rocm_build(tmp_path):
    """vLLM's topk.cu includes its PTX top-k header under `#ifndef USE_ROCM`: the ROCm build compiles
    topk.cu but never that header, so its inline PTX is not a broken ROCm path."""
    from tests.conftest import write_tree

    repo = write_tree(tmp_path / "repo", {
        "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.26)\nproject(kern LANGUAGES CXX)\n"
                           "if(USE_ROCM)\n  enable_language(HIP)\n  set(SRCS csrc/topk.cu)\n"
                           "else()\n  enable_language(CUDA)\n  set(SRCS csrc/topk.cu)\nendif()\n"
                           "add_library(kern SHARED ${SRCS})\n"),
        "csrc/topk.cu": ('#include "common.h"\n#ifndef USE_ROCM\n  #include "ptx_topk.cuh"\n#endif\n'
                         "__global__ void topk(int* x) { x[0] = 1; }\n"),
        "csrc/common.h": "#pragma once\n",
        "csrc/ptx_topk.cuh": ('#pragma once\n__device__ int ld(int* p) {\n  int v;\n'
                              '  asm volatile("ld.cg.global.b32 %0, [%1];" : "=r"(v) : "l"(p));\n  return v;\n}\n'),
    })
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    report = json.loads(target.read_text())
    ptx = [f for f in report["findings"] if f["path"] == "csrc/ptx_topk.cuh" and f["line"] == 4]
    assert ptx and all(f["disposition"] != "live" for f in ptx), ptx
    assert report["summary"]["verdict"] != "blocked"


def test_p3_torch_extension_with_rocm_redefinitions_is_ready(reports):
    """exllamav2's shape: a CUDAExtension whose setup.py adds a -D flag on `torch_version.hip` (an aliased
    import), its sources listed inside a `setup_kwargs` dict, and a compat header that redefines CUDA names
    under `#if defined(USE_ROCM)`."""
    r = reports["p3_torch_extension_redefinitions"]
    assert r["summary"]["verdict"] == "ready"
    assert "setup.py:10 switches to a ROCm build (`-DQUANTLIB_HIP_HALF` at setup.py:11)" in r["summary"]["verdict_reason"]
    assert disposition(r, "quantlib/ext/cuda/norm.cu", 8, "RA200") == "shim-mapping"
    assert disposition(r, "quantlib/ext/cuda/norm.cu", 9, "RA831") == "shim-mapping"
    assert disposition(r, "quantlib/ext/cuda/compat.cuh", 6, "RA831") == "shim-mapping"
    notes = {f["disposition_note"] for f in r["findings"] if f["path"] == "quantlib/ext/cuda/norm.cu"}
    assert "the project redefines `__shfl_xor_sync` for the ROCm build (quantlib/ext/cuda/compat.cuh:5)" in notes


def test_p7_env_switch_marks_the_cuda_only_extension(reports):
    """auto-gptq's shape: `ROCM_VERSION` from the environment selects the ROCm build; an extension appended
    only under `if not ROCM_VERSION` is CUDA-only, and its PTX is named as that artifact's cost."""
    r = reports["p7_env_switch_cuda_only_ext"]
    assert r["summary"]["verdict"] == "needs-port"
    reason = r["summary"]["verdict_reason"]
    assert "ptx-inline-asm (lop3) in gptqlib/marlin/marlin_kernel.cu:6" in reason
    assert "CUDA-only artifacts: `marlin_kernels`" in reason
    assert disposition(r, "setup.py", 19, "RA650") == "CUDA branch of a build script"
    assert r["components"][0]["rocm_path"]["verified"] is True


def test_rocm_redefinitions_need_a_rocm_only_branch():
    """The same defines outside a ROCm branch redefine nothing for ROCm: the mask stays a finding."""
    from auditor.truth.cpp import PreprocFacts
    from auditor.model.rocmpath.redefine import rocm_redefinitions
    from auditor.match.rulebook import load_rulebook
    facts = PreprocFacts.from_guards(load_rulebook().guards)
    on_rocm = "#if defined(USE_ROCM)\n#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)\n#define WARP 64\n#endif\n"
    # every name counts; the judge maps lines using a CUDA-shaped one, and only findings on another (`WARP`)
    assert rocm_redefinitions(on_rocm, facts) == {"__shfl_xor_sync": 2, "WARP": 3}
    guarded = "#ifdef USE_ROCM\n#define ROCM_SHIM_H_\n#define atomicAdd_block atomicAdd\n#endif\n"
    assert rocm_redefinitions(guarded, facts) == {"atomicAdd_block": 3}   # a bare #define maps nothing
    both = "#define __shfl_xor_sync(m, v, l) __shfl_xor(v, l)\n#ifdef USE_ROCM\n#endif\n"
    assert rocm_redefinitions(both, facts) == {}
    cuda_side = "#ifndef USE_ROCM\n#define __stwb(d, s) *d = s\n#endif\n"
    assert rocm_redefinitions(cuda_side, facts) == {}


def test_cuda_version_substring_test_is_a_cuda_branch():
    """megablocks' shape: `if 'cu' in torch.__version__ and CUDA_HOME is not None:` builds the extension only
    on CUDA PyTorch (ROCm PyTorch's version reads `2.7.0+rocm6.3`); `'rocm' in torch.__version__` is ROCm."""
    from auditor.model.rocmpath.pybuild import read_python_build
    text = (
        "import torch\n"
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import CUDA_HOME, CUDAExtension\n"
        "ext_modules = []\n"
        "if 'cu' in torch.__version__ and CUDA_HOME is not None:\n"
        "    nvcc_flags = ['--ptxas-options=-v']\n"
        "    ext_modules = [CUDAExtension('ops', ['csrc/ops.cu'])]\n"
        "if 'rocm' in torch.__version__:\n"
        "    print('ROCm')\n"
        "setup(name='m', ext_modules=ext_modules)\n"
    )
    build = read_python_build("setup.py", text)
    assert {5, 6, 7} <= build.cuda_lines
    assert build.artifacts == {"ops": {"cuda"}}
    assert build.rocm_tests == [8]


def test_requirement_sets_the_packaging_never_reads_are_optional(tmp_path):
    """vLLM's shape: setup.py reads requirements/common.txt (which includes base.txt); kv_connectors.txt
    beside them is an optional install set, so its CUDA wheels do not move the verdict."""
    (tmp_path / "requirements").mkdir()
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n"
        "def reqs(name):\n"
        "    return open('requirements/' + name).read().split()\n"
        "setup(name='servelib', packages=['servelib'], install_requires=reqs('common.txt'))\n")
    (tmp_path / "servelib").mkdir()
    (tmp_path / "servelib" / "__init__.py").write_text("")
    (tmp_path / "requirements" / "common.txt").write_text("-r base.txt\nnumpy\n")
    (tmp_path / "requirements" / "base.txt").write_text("cupy-cuda12x\n")
    (tmp_path / "requirements" / "kv_connectors.txt").write_text("numpy\ncupy-cuda12x\n")
    target = tmp_path / "out.json"
    assert main([str(tmp_path), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress",
                 "--no-cache", "-j", "1"]) == 0
    report = json.loads(target.read_text())
    assert disposition(report, "requirements/kv_connectors.txt", 2, "RA114") == "optional"
    assert disposition(report, "requirements/base.txt", 1, "RA114") == "live"   # read through -r


def test_without_a_requirement_file_named_by_the_packaging_none_is_optional():
    from auditor.model.rocmpath.reqsets import unread_requirement_files
    texts = {"setup.py": "setup(install_requires=['torch'])", "requirements.txt": "cupy-cuda12x\n",
             "requirements-dev.txt": "pytest\n"}
    assert unread_requirement_files(list(texts), texts.__getitem__) == frozenset()
    texts["setup.py"] = "setup(install_requires=open('requirements.txt').read().split())"
    assert unread_requirement_files(list(texts), texts.__getitem__) == frozenset({"requirements-dev.txt"})


def test_container_findings_in_a_build_helper_script_are_ops(tmp_path):
    """TransformerEngine's build_tools/wheel_utils/launch_x86.sh runs `docker run --gpus=all`: a container
    finding is operations wherever the script lives, never live porting work."""
    (tmp_path / "build_tools").mkdir()
    (tmp_path / "build_tools" / "launch.sh").write_text("#!/bin/sh\ndocker run --runtime=nvidia --gpus=all wheel\n")
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(name='x')\n")
    target = tmp_path / "out.json"
    assert main([str(tmp_path), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress",
                 "--no-cache", "-j", "1"]) == 0
    report = json.loads(target.read_text())
    assert disposition(report, "build_tools/launch.sh", 2, "RA703") == "ops"
    assert report["summary"]["verdict"] == "ready"


def test_verdict_reason_states_the_confidence_and_the_rocm_ci(tmp_path):
    """rocm-path.md section 2: CI that builds for ROCm raises the stated confidence, and the reason says which job."""
    import shutil
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "p3_torch_extension_redefinitions", repo)
    target = tmp_path / "out.json"
    args = [str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"]
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "issue_autolabel.yml").write_text(   # names ROCm, builds nothing
        "jobs:\n  label:\n    steps:\n      - uses: actions/github-script@v7\n        with:\n"
        "          script: 'labels = {rocm: [\"ROCm\", \"rocm-smi\", \"gfx942\"]}'\n")
    assert main(args) == 0
    assert json.loads(target.read_text())["summary"]["verdict_reason"].endswith(
        "Confidence medium: no CI job builds for ROCm")
    (repo / ".github" / "workflows" / "wheels-rocm.yml").write_text(
        "jobs:\n  build:\n    runs-on: ubuntu-latest\n    container: rocm/dev-ubuntu-22.04:6.2\n"
        "    steps:\n      - run: pip wheel --no-build-isolation .\n")
    assert main(args) == 0
    assert json.loads(target.read_text())["summary"]["verdict_reason"].endswith(
        "Confidence high: CI builds for ROCm (.github/workflows/wheels-rocm.yml)")


def test_the_imports_a_module_runs_on_import_are_read_from_the_scan_s_own_parse():
    import ast

    from auditor.parse.pyimports import absolute, unguarded_imports

    module = ast.parse(
        "import torch\n"
        "from . import ops\n"
        "from ..kernels.fused import rmsnorm as rms\n"
        "try:\n    import apex\nexcept ImportError:\n    apex = None\n"
        "if TYPE_CHECKING:\n    import transformer_engine\n"
        "if is_flash_attn_available():\n    import flash_attn\nelse:\n    import xformers\n"
        "def later():\n    import deep_gemm\n"
        "class Model:\n    import triton\n"
    )
    assert unguarded_imports(module) == ("torch", ".", ".ops", "..kernels.fused", "..kernels.fused.rmsnorm",
                                         "xformers", "triton")
    assert absolute(".ops", "pkg.layers", is_package=True) == "pkg.layers.ops"
    assert absolute("..kernels.fused", "pkg.layers.norm", is_package=False) == "pkg.kernels.fused"
    assert absolute(".", "pkg.layers.norm", is_package=False) == "pkg.layers"


def _optional_integration_tree(root):
    from tests.conftest import write_tree

    return write_tree(root, {
        "pyproject.toml": "[project]\nname = 'trainkit'\ndependencies = ['torch']\n[build-system]\n"
                          "requires = ['setuptools']\n",
        "trainkit/__init__.py": "from .core import train\n",
        "trainkit/core.py": "import torch\n\ndef train():\n    from . import te_backend\n",
        "trainkit/te_backend.py": "import transformer_engine.pytorch as te\n",
        "trainkit/loop.py": "from trainkit import core\nimport transformer_engine.pytorch as te\n",
    })


def test_a_module_only_a_function_imports_is_optional_and_one_the_package_loads_is_not(tmp_path):
    repo = _optional_integration_tree(tmp_path / "repo")
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    report = json.loads(target.read_text())
    assert disposition(report, "trainkit/te_backend.py", 1, "RA111") == "optional"
    # loop.py is not imported by the package either: optional too; core.py (loaded by __init__) imports nothing NVIDIA
    assert disposition(report, "trainkit/loop.py", 2, "RA111") == "optional"


def test_reachability_reads_the_modules_a_partial_scan_did_not_cover(tmp_path):
    """`--diff-base` scans only the changed files (pipeline.audit `only=`): the import graph still needs every
    shipped module, read from disk when the scan did not parse it."""
    from auditor.run.pipeline import audit
    from auditor.match.rulebook import load_rulebook

    repo = _optional_integration_tree(tmp_path / "repo")
    (repo / "trainkit" / "core.py").write_text("import torch\nfrom . import te_backend\n")
    report = audit([repo], load_rulebook(), only=frozenset({"trainkit/te_backend.py"}))
    found = {(f.path, f.span.line, f.rule_id): f.disposition for f in report.findings}
    assert found[("trainkit/te_backend.py", 1, "RA111")] == "live"   # __init__ -> core -> te_backend, unguarded


def test_rules_naming_only_the_project_s_own_package_are_not_run_on_it():
    from auditor.model.ownpackages import own_package_rules
    from auditor.match.rulebook import load_rulebook

    rules = load_rulebook().rules
    dropped = own_package_rules(rules, frozenset({"deepspeed"}))
    assert "RA130" in dropped                                  # deepspeed's CUDA-only ops, scanning deepspeed
    assert "RA141" not in dropped and "RA111" not in dropped    # other packages' rules stay
    assert own_package_rules(rules, frozenset({"trainkit"})) == frozenset()


def _vllm_like_tree(root):
    """vLLM 0.11's shape: a language variable set per branch, a CUDA-only block choosing sources by its value, two
    headers of one name in different directories, and CUDA intrinsics the ROCm branch defines itself."""
    from tests.conftest import write_tree

    return write_tree(root, {
        "CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.26)\nproject(kern LANGUAGES CXX)\n"
            "if (NOT HIP_FOUND AND CUDA_FOUND)\n  set(GPU_LANG \"CUDA\")\nelseif(HIP_FOUND)\n"
            "  set(GPU_LANG \"HIP\")\n  enable_language(HIP)\nendif()\n"
            "set(EXT_SRC \"csrc/gguf/gguf_kernel.cu\")\n"
            "if(GPU_LANG STREQUAL \"CUDA\")\n  list(APPEND EXT_SRC \"csrc/awq/gemm_kernels.cu\")\nendif()\n"
            "add_library(kern SHARED ${EXT_SRC})\n"),
        "csrc/awq/gemm_kernels.cu": '#include "dequantize.cuh"\n__global__ void awq(int* x) { x[0] = 1; }\n',
        "csrc/awq/dequantize.cuh": ('#pragma once\n__device__ unsigned lop(unsigned a) {\n  unsigned r;\n'
                                    '  asm volatile("lop3.b32 %0, %1, %1, %1, 0xea;" : "=r"(r) : "r"(a));\n'
                                    '  return r;\n}\n'),
        "csrc/gguf/gguf_kernel.cu": ('#include "dequantize.cuh"\n#include "common.h"\n'
                                     "__global__ void dot(int* x) { x[0] = __dp4a(x[1], x[2], x[3]); }\n"),
        "csrc/gguf/dequantize.cuh": "#pragma once\n__device__ int half_of(int v) { return v / 2; }\n",
        "csrc/gguf/common.h": ("#pragma once\n#if defined(USE_ROCM)\n"
                               "static __device__ __forceinline__ int __dp4a(const int a, const int b, int c) {\n"
                               "  return c + a * b;\n}\n#endif\n"),
    })


def test_a_variable_compared_by_value_tells_the_cuda_block_from_the_rocm_one(tmp_path):
    from auditor.model.rocmpath.cmakebuild import read_cmake

    repo = _vllm_like_tree(tmp_path / "repo")
    build = read_cmake("CMakeLists.txt", (repo / "CMakeLists.txt").read_text())
    assert build.sources["csrc/awq/gemm_kernels.cu"] == {"cuda"}
    assert build.sources["csrc/gguf/gguf_kernel.cu"] == {"both"}


def test_vllm_like_tree_is_ready_its_cuda_only_header_and_rocm_defined_intrinsics_are_not_blockers(tmp_path):
    repo = _vllm_like_tree(tmp_path / "repo")
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    report = json.loads(target.read_text())
    found = {(f["path"], f["line"]): f["disposition"] for f in report["findings"]}
    # the awq header is included only by the CUDA-only awq kernel: `#include "dequantize.cuh"` in gguf/ is gguf's own
    assert found[("csrc/awq/dequantize.cuh", 4)] != "live"
    # __dp4a is defined by the project on the ROCm branch: its use is mapped by that shim
    assert found[("csrc/gguf/gguf_kernel.cu", 3)] == "shim-mapping", found
    assert report["summary"]["verdict"] == "ready", report["summary"]["verdict_reason"]


SCIKIT_BUILD = ("[build-system]\nrequires = ['scikit-build-core']\nbuild-backend = 'scikit_build_core.build'\n"
                "[project]\nname = 'kern'\nversion = '1'\n")


@pytest.mark.parametrize(("files", "recipe"), [
    ({"setup.py": ("import subprocess\nfrom setuptools import setup\n\n"
                   "class cmake_build_ext:\n    def run(self):\n        subprocess.check_call(['cmake', '..'])\n\n"
                   "setup(name='kern', cmdclass={'build_ext': cmake_build_ext})\n")},
     "Install: `pip install --no-build-isolation .` on ROCm PyTorch"),          # vLLM: setup.py runs CMake
    ({"pyproject.toml": SCIKIT_BUILD}, "Install: `pip install .`"),
    ({"pyproject.toml": SCIKIT_BUILD,                                             # llama-cpp-python
      "CMakeLists.txt": ("cmake_minimum_required(VERSION 3.26)\nproject(kern LANGUAGES CXX)\n"
                         "option(KERN_HIP \"build for AMD GPUs\" OFF)\nif(KERN_HIP)\n  enable_language(HIP)\nelse()\n"
                         "  enable_language(CUDA)\nendif()\nadd_library(kern SHARED csrc/gguf/gguf_kernel.cu)\n")},
     'Install: `CMAKE_ARGS="-DKERN_HIP=ON" pip install .`'),
])
def test_the_install_recipe_is_the_command_a_user_runs(tmp_path, files, recipe):
    from tests.conftest import write_tree

    repo = _vllm_like_tree(tmp_path / "repo")
    write_tree(repo, files)
    target = tmp_path / "r.json"
    main([str(repo), "--format", "json", "-o", str(target), "--fail-on", "never", "--no-progress", "--no-cache"])
    assert recipe in json.loads(target.read_text())["summary"]["verdict_reason"]


def test_p3_define_macros_on_the_rocm_branch_make_the_project_macro_a_rocm_guard(reports):
    """torch_scatter / nerfacc: `define_macros += [("WITH_HIP", None)]` only when torch.version.hip."""
    r = reports["p3_setup_define_macros"]
    assert r["summary"]["verdict"] == "ready"
    reason = r["summary"]["verdict_reason"]
    assert reason.startswith("ready: ROCm build in tree: setup.py:15 switches to a ROCm build "
                             "(`-DWITH_HIP` at setup.py:16)")
    assert "Install: `pip install --no-build-isolation .` on ROCm PyTorch" in reason
    rows = {(f["path"], f["line"]): f for f in r["findings"]}
    # the legacy maskless shuffle written under #ifdef WITH_HIP is the ROCm code: nothing to report
    assert ("csrc/cuda/segment.cu", 16) not in rows
    # the 32-bit mask in its #else is the CUDA build's: WITH_HIP, the project's macro, guards it
    assert rows[("csrc/cuda/segment.cu", 18)]["disposition"] == "guarded by a project macro"
    # `CUDA_HOME is not None or torch.version.hip` is true on ROCm
    assert rows[("setup.py", 8)]["guarded"] is True
