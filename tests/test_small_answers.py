"""The smaller contradictions: a project's own extension modules are its own package; another vendor's backend
named `ggml-sycl` beside `ggml-hip` is a backend, not work; `rule` never breaks a line of code or a URL; no
SARIF message ends in `..`; "1 file"; no HIPIFY percentage of nothing."""
import json

from auditor.cli.app import main
from tests.conftest import write_tree

BASE = ["--no-progress", "--no-html", "-j", "1"]


def _json(capsys, *args) -> dict:
    main([*map(str, args), "--format", "json", *BASE])
    return json.loads(capsys.readouterr().out)


def test_the_projects_own_extension_modules_are_its_own_package(tmp_path, capsys):
    write_tree(tmp_path, {
        "setup.py": ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                     "setup(name='apex', packages=['apex'], ext_modules=[\n"
                     "    CUDAExtension(name='amp_C', sources=['csrc/amp_C.cu']),\n"
                     "    CUDAExtension('fused_layer_norm_cuda', ['csrc/ln.cu'])])\n"),
        "apex/__init__.py": "",
        "apex/optim.py": "import amp_C\nimport fused_layer_norm_cuda\n",
        "csrc/amp_C.cu": "__global__ void k(float *p) { p[0] = 1; }\n",
        "csrc/ln.cu": "__global__ void l(float *p) { p[0] = 2; }\n",
    })
    data = _json(capsys, tmp_path)
    assert not [f for f in data["findings"] if f["path"] == "apex/optim.py"]
    write_tree(tmp_path, {"apex/other.py": "import apex_C_from_elsewhere\nimport fused_dense_cuda\n"})
    data = _json(capsys, tmp_path)   # a module the project does not build is still reported
    assert [f["name"] for f in data["findings"] if f["path"] == "apex/other.py"] == ["nvidia-apex"]


def test_a_sycl_backend_beside_the_hip_one_is_another_vendors_backend(tmp_path, capsys):
    write_tree(tmp_path, {
        "CMakeLists.txt": "project(g LANGUAGES C CXX)\nif(GGML_HIP)\n add_subdirectory(src/ggml-hip)\nendif()\n"
                          "if(GGML_SYCL)\n add_subdirectory(src/ggml-sycl)\nendif()\n",
        "src/ggml-hip/CMakeLists.txt": "enable_language(HIP)\nadd_library(ggml-hip k.cu)\n",
        "src/ggml-hip/k.cu": "__global__ void k(float *p) { p[0] = 1; }\n",
        "src/ggml-sycl/CMakeLists.txt": "add_library(ggml-sycl s.cpp)\n",
        "src/ggml-sycl/s.cpp": "float f(float v) { return __shfl_xor_sync(0xffffffff, v, 1) + warpSize; }\n",
    })
    data = _json(capsys, tmp_path)
    sycl = [f for f in data["findings"] if f["path"].startswith("src/ggml-sycl/")]
    assert sycl and all(f["disposition"] == "other-vendor-backend" for f in sycl)


def test_rule_never_breaks_a_line_at_80_columns(monkeypatch, capsys):
    from auditor.match.rulebook import load_rulebook

    monkeypatch.setenv("COLUMNS", "80")
    shown = 2   # the page shows the first two flag examples
    rule = next(r for r in load_rulebook().rules
                if any(len(line) > 80 for e in r.flag[:shown] for line in e.code.splitlines()))
    assert main(["rule", rule.id]) == 0
    out = capsys.readouterr().out.splitlines()
    longest = max((line for e in rule.flag[:shown] for line in e.code.splitlines()), key=len)
    assert any(line.startswith(longest) for line in out)   # whole, on one line (a reported line gains a comment)


def test_sarif_messages_never_end_in_two_full_stops(tmp_path, capsys):
    write_tree(tmp_path, {"requirements.txt": "pynvml\ntensorrt-llm\nbitsandbytes==0.41\n",
                          "m.py": "import pynvml\nimport tensorrt_llm\n"})
    main([str(tmp_path), "--format", "sarif", *BASE])
    sarif = json.loads(capsys.readouterr().out)
    texts = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
    texts += [r["fullDescription"]["text"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    assert texts and not [t for t in texts if ".." in t.replace("...", "")]


def test_one_python_file_says_one_file_and_no_coverage_percentage(tmp_path, capsys):
    write_tree(tmp_path, {"m.py": "import pynvml\n"})
    main([str(tmp_path / "m.py"), *BASE])
    out = " ".join(capsys.readouterr().out.split())
    assert "in 1 file," in out and "1 files" not in out
    assert "HIPIFY coverage n/a (no CUDA API references)" in out and "100.0%" not in out
    main([str(tmp_path / "m.py"), "-q", *BASE])
    assert "1 file ·" in capsys.readouterr().out
