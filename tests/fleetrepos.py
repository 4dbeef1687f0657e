"""Small repositories of known verdicts for the fleet tests: portable (ready), trt (TensorRT-LLM in shipped
code: blocked) and kern (a .cu kernel with a 32-bit warp mask and no ROCm build: needs-port)."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from auditor.cli.app import main
from tests.conftest import write_tree
from tests.gitrepo import GitRepo

PORTABLE = {
    "app/model.py": "import torch\n\n\ndef forward(x):\n    return torch.relu(x).to('cuda')\n",
    "requirements.txt": "torch>=2.1\n",
}
TRT = {
    "serve/engine.py": "import tensorrt_llm\n\nENGINE = tensorrt_llm.LLM(model='llama')\n",
    "pyproject.toml": '[project]\nname = "trt"\nversion = "1"\ndependencies = ["tensorrt-llm==0.10.0"]\n',
}
KERN = {
    "csrc/reduce.cu": (
        "__global__ void reduce(float* out, const float* in) {\n"
        "    float v = in[threadIdx.x];\n"
        "    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);\n"
        "    if (threadIdx.x == 0) out[blockIdx.x] = v;\n"
        "}\n"),
    "setup.py": (
        "from setuptools import setup\n"
        "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n\n"
        "setup(name='kern', ext_modules=[CUDAExtension('kern', ['csrc/reduce.cu'])],\n"
        "      cmdclass={'build_ext': BuildExtension})\n"),
}
VERDICTS = {"portable": "ready", "trt": "blocked", "kern": "needs-port"}


def make_org(root: Path) -> Path:
    """root/{portable,kern} as git repositories, root/trt a plain tree (an unpacked sdist)."""
    GitRepo(root / "portable", PORTABLE)
    GitRepo(root / "kern", KERN)
    write_tree(root / "trt", TRT)
    return root


def run_cli(*args: str | Path) -> tuple[int, str]:
    """The command line in this process: (exit code, standard output)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([str(a) for a in args])
    return code, out.getvalue()


def run_fleet(*args: str | Path) -> tuple[int, dict]:
    code, out = run_cli("fleet", *args, "--format", "json", "-q")
    return code, json.loads(out) if out.strip() else {}


def check_json(path: Path, target: Path) -> dict:
    """A single `rocm-audit check PATH --format json` run's report."""
    code, _ = run_cli("check", path, "--format", "json", "-o", target, "--no-progress", "-j", "1")
    assert code in (0, 1)
    return json.loads(target.read_text(encoding="utf-8"))
