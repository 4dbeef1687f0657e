"""Markers that a tree builds or runs on ROCm (rules/guards.toml's [markers]): a build file's ROCm build, a CI job's
ROCm image, settings or runner, shipped code that dispatches on ROCm, a setup.py's HIP flags."""
from __future__ import annotations

import re

from auditor.truth.switches import Markers, shipped


def _markers(markers: Markers | None) -> Markers:
    return markers or shipped().markers


def rocm_build_file(text: str, markers: Markers | None = None) -> bool:
    """A setup.py, CMakeLists.txt, pyproject.toml, Makefile or setup.cfg that builds for ROCm."""
    return bool(_markers(markers).rocm_build_file.search(text))


def rocm_ci(text: str, markers: Markers | None = None) -> bool:
    """A CI file with a job that builds or runs on ROCm: a ROCm image, settings or tools, or an AMD runner after
    `runs-on:` / `agents:` on the same line (read line by line: a pattern such as `runs-on:[^\\n]*…` rescans the
    rest of the line from every `runs-on:` in it)."""
    m = _markers(markers)
    if m.rocm_ci.search(text):
        return True
    for key, runner in ((RUNS_ON, m.rocm_runner), (AGENTS, m.rocm_agent)):
        done = 0
        for found in key.finditer(text):
            if found.start() < done:
                continue        # on a line already searched from its first key
            end = text.find("\n", found.end())
            done = len(text) if end < 0 else end
            if runner.search(text, found.end(), done):
                return True
    return False


RUNS_ON = re.compile(r"(?i)runs-on:")
AGENTS = re.compile(r"(?i)agents:")


def rocm_dispatch(text: str, markers: Markers | None = None) -> re.Match[str] | None:
    """Shipped code that picks its ROCm path at run time (`torch.version.hip`), the first such place."""
    m = _markers(markers)
    return m.rocm_dispatch.search(text) if any(word in text for word in m.rocm_dispatch_words) else None


def setup_rocm(text: str, markers: Markers | None = None) -> bool:
    """A setup.py string (a flag, a source, a name) that builds an extension for HIP."""
    return bool(_markers(markers).setup_rocm.search(text))


def setup_strong(text: str, markers: Markers | None = None) -> bool:
    """The HIP flags a report quotes first (`--offload-arch`, `-D__HIP_PLATFORM_AMD__`)."""
    return bool(_markers(markers).setup_strong.search(text))


def setup_cuda_configuration(name: str, markers: Markers | None = None) -> bool:
    """A dotted name a setup.py test reads that picks the CUDA configuration (`torch.version.cuda`)."""
    return bool(_markers(markers).setup_cuda_configuration.search(name))


def hip_macro(name: str, markers: Markers | None = None) -> bool:
    """A macro of HIP's own (`__HIP_NO_HALF_CONVERSIONS__`)."""
    return name.startswith(_markers(markers).hip_macro_prefix)
