"""Seconds the build pre-pass takes on adversarial build files of about 2 MB each (CMake, Makefile, setup.py, an
op builder, a CI file): every reader must stay linear in its input. Run: python -m scripts.bench_prepass"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

from auditor.run.discover.files import discover
from auditor.model.rocmpath.reader import read_project

SIZE = 2 * 1024 * 1024 - 1024
CASES = {
    "cmake: a run of path characters": {"CMakeLists.txt": "project(x)\nset(S " + "a/" * (SIZE // 2) + ")\n"},
    "cmake: unclosed strings": {"CMakeLists.txt": "project(x)\nset(" + '"\\' * (SIZE // 2) + "\n"},
    "cmake: parentheses": {"CMakeLists.txt": "project(x)\nif(" + "(" * SIZE + "\n"},
    "cmake: add_subdirectory lines": {"CMakeLists.txt": "project(x)\n" + "add_subdirectory(x)\n" * (SIZE // 20)},
    "cmake: nested if()": {"CMakeLists.txt": "project(x)\n" + "if(USE_ROCM)\n" * (SIZE // 13)},
    "cmake: set() lines": {"CMakeLists.txt": "project(x)\nif(USE_ROCM)\n" + "set(V1 ON)\n" * (SIZE // 11)},
    "makefile: one long line": {"Makefile": "all:\n\tnvcc " + "-D" * (SIZE // 2) + "\n"},
    "makefile: nested ifeq": {"Makefile": "X ?= 0\nnvcc x.cu\n" + "ifeq ($(X),1)\n" * (SIZE // 14)},
    "setup.py: name=x lines": {"setup.py": "from setuptools import setup\n" + "name=x,\n" * (SIZE // 8)},
    "setup.py: 200 KB of ROCm branches": {"setup.py": "import torch\n" + "if torch.version.hip:\n    x = 'a.cu'\n"
                                          * (200 * 1024 // 38)},
    "setup.py: 2,500-deep attribute chain": {"setup.py": "from setuptools import setup\nx = a" + ".b" * 2500},
    "op builder: 2 MB": {"op_builder/b.py": "import torch\n" + "if torch.version.hip:\n    pass\n" * (SIZE // 32)},
    "ci: runs-on: repeated": {".github/workflows/x.yml": "runs-on:" * (SIZE // 8) + "\n",
                              "setup.py": "from setuptools import setup\nsetup()\n"},
}


def main() -> None:
    for name, files in CASES.items():
        with tempfile.TemporaryDirectory() as directory:
            root = Path(directory)
            for relative, text in files.items():
                (root / relative).parent.mkdir(parents=True, exist_ok=True)
                (root / relative).write_text(text, encoding="utf-8")
            sources = discover([root], root).files
            start = time.perf_counter()
            project = read_project(sources)
            seconds = time.perf_counter() - start
            note = "; ".join(f"{p}: {why}" for p, why in project.unread.items())
            print(f"{seconds:6.2f} s  {name}" + (f"  ({note})" if note else ""), flush=True)


if __name__ == "__main__":
    main()
