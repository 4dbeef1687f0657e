"""The ROCm side of `fix --verify` without a usable hipcc: a device-code check of a `.cu` with libclang (the
libclang-ng wheel, which ships its clang resource headers) against HIP headers of release 6.2 or later, for
gfx942. HIP's `*_sync` functions reject a narrower-than-64-bit mask with a static_assert, so this check tells a
32-bit mask from the fixed one; Debian's hipcc (HIP 5.2) has no `*_sync` functions and cannot.

The headers come from ROCM_AUDIT_HIP_INCLUDE (a directory holding hip/hip_runtime.h), else from the installed
triton package (its AMD backend ships HIP 7.1's headers; the package is located, never imported), else
/opt/rocm/include. The CUDA runtime headers a .cu includes are answered by HIP's (the names HIPIFY maps them
to, in rules/fixes/hip_headers.toml). The parse runs in a child process with a time limit (auditor/fix/
hipworker.py): a scanned file that makes clang loop or grow cannot stall or exhaust the command."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import tempfile
import tomllib
from collections import Counter
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from auditor.match.rulebook import rules_root
from auditor.util.childpython import module_command

OFFLOAD_ARCH = "gfx942"
PARSE_SECONDS = 120
HALF_HEADERS = ("hip_fp16.h", "hip_bf16.h")
OLDEST_SYNC_HIP = (6, 2)        # the first HIP release with the *_sync warp functions and their mask check
_VERSION = re.compile(rb"#define\s+HIP_VERSION_(MAJOR|MINOR)\s+(\d+)")


@dataclass(frozen=True, slots=True)
class HipDeviceCheck:
    include: Path               # holds hip/hip_runtime.h
    hip_version: tuple[int, int]
    resource: Path              # clang's resource directory, shipped with libclang-ng

    def describe(self) -> str:
        major, minor = self.hip_version
        half = [name for name in HALF_HEADERS if (self.include / "hip" / name).is_file()]
        found = (f"{', '.join(half)} from there" if half else
                 "no hip_fp16.h/hip_bf16.h there, so files using CUDA's half types are not judged")
        return f"libclang device check ({OFFLOAD_ARCH}, HIP {major}.{minor} headers at {self.include}; {found})"


def hip_header_dirs() -> list[Path]:
    """Where HIP headers may be, in the order they are tried."""
    dirs = [Path(p) for p in [os.environ.get("ROCM_AUDIT_HIP_INCLUDE", "")] if p]
    try:
        spec = importlib.util.find_spec("triton")      # locates the package; runs none of its code
    except (ImportError, ValueError):
        spec = None
    for location in (spec.submodule_search_locations or []) if spec is not None else []:
        dirs.append(Path(location) / "backends" / "amd" / "include")
    dirs.append(Path("/opt/rocm/include"))
    return dirs


def header_version(include: Path) -> tuple[int, int] | None:
    try:
        text = (include / "hip" / "hip_version.h").read_bytes()[:20_000]
    except OSError:
        return None
    found = {name.decode(): int(value) for name, value in _VERSION.findall(text)}
    return (found["MAJOR"], found["MINOR"]) if {"MAJOR", "MINOR"} <= found.keys() else None


def find_hip_device_check() -> tuple[HipDeviceCheck | None, str]:
    """The check, or None and why it cannot run here."""
    try:
        spec = importlib.util.find_spec("clang.native")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, "libclang is not installed (pip install 'rocm-audit[verify]')"
    resource = Path(list(spec.submodule_search_locations)[0]) / "resource"
    if not (resource / "include").is_dir():
        return None, "the installed libclang has no clang resource headers (libclang-ng ships them)"
    too_old = []
    usable: list[HipDeviceCheck] = []
    for include in hip_header_dirs():
        if not (include / "hip" / "hip_runtime.h").is_file():
            continue
        version = header_version(include)
        if version is not None and version >= OLDEST_SYNC_HIP:
            usable.append(HipDeviceCheck(include, version, resource))
        else:
            too_old.append(f"{include} (HIP {'.'.join(map(str, version)) if version else 'version unknown'})")
    if usable:   # a ROCm install ships the half-precision headers; triton's copy does not
        return next((c for c in usable if (c.include / "hip" / HALF_HEADERS[0]).is_file()), usable[0]), ""
    if too_old:
        return None, "HIP headers found are older than 6.2 and cannot judge masks: " + ", ".join(too_old)
    return None, "no HIP headers found (install triton, or set ROCM_AUDIT_HIP_INCLUDE)"


def cuda_header_answers() -> dict[str, str]:
    """CUDA runtime header -> the HIP header that answers it in the check."""
    data = tomllib.loads((rules_root() / "fixes" / "hip_headers.toml").read_text(encoding="utf-8"))
    return {str(cuda): str(hip) for cuda, hip in data["header"].items()}


@dataclass(frozen=True, slots=True)
class DeviceErrors:
    errors: Counter          # (file name, message) -> count; lines move with inserted text, so they are left out
    failure: str = ""        # the check could not run (time limit, crash)

    def first(self, other: Counter | None = None) -> str:
        fresh = self.errors - (other or Counter())
        return next(iter(fresh))[1][:160] if fresh else ""


_QUOTED = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


def _spellings(path: Path, text: str, given: Mapping[str, str]) -> dict[str, str]:
    """The given files again under the path an include spells them with (`dir/../rocm_audit_compat.h`): clang
    finds a file it is handed in memory only under the very path it looks up, and a file the run has not written
    yet is not on disk to resolve `..` against."""
    found: dict[str, str] = {}
    for directory, content in [(str(path.parent), text), *((os.path.dirname(p), t) for p, t in given.items())]:
        for name in _QUOTED.findall(content):
            spelled = os.path.join(directory, name)
            normal = os.path.normpath(spelled)
            if spelled != normal and normal in given:
                found[spelled] = given[normal]
    return found


def device_errors(check: HipDeviceCheck, path: Path, root: Path, text: str,
                  files: Mapping[str, str] = MappingProxyType({}), include_dirs: tuple[str, ...] = ()) -> DeviceErrors:
    """clang's errors for `text` compiled as the device side of `path` (its directory and the scanned root on the
    include path, the file itself never read from disk; `files`, relative to the root, read as given)."""
    with tempfile.TemporaryDirectory(prefix="rocm-audit-hip-") as scratch:
        shims = Path(scratch) / "cuda-as-hip"
        for cuda, hip in cuda_header_answers().items():
            target = shims / cuda
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(f"#pragma once\n#include <{hip}>\n", encoding="utf-8")
        args = ["-x", "hip", "--cuda-device-only", f"--offload-arch={OFFLOAD_ARCH}", "-nogpuinc", "-nogpulib",
                "-std=c++17", "-w", "-ferror-limit=0", "-D__HIP_PLATFORM_AMD__",
                "-include", "__clang_hip_runtime_wrapper.h", "-include", "hip/hip_runtime.h",
                "-resource-dir", str(check.resource), "-isystem", str(check.resource),
                "-isystem", str(check.include), "-isystem", str(shims), "-I", str(path.parent), "-I", str(root)]
        extra = [arg for name in files for arg in ("-I", str((root / name).parent))]
        extra += [arg for name in include_dirs for arg in ("-I", str(root / name))]   # the project's include paths
        given = {str(root / name): content for name, content in files.items()}
        request = json.dumps({"path": str(path), "text": text, "args": args + extra,
                              "files": {**given, **_spellings(path, text, given)}})
        try:
            done = subprocess.run(module_command("auditor.fix.hipworker"), input=request.encode("utf-8"),
                                  capture_output=True, timeout=PARSE_SECONDS, cwd=scratch, stdin=None)
        except (OSError, subprocess.TimeoutExpired) as err:
            return DeviceErrors(Counter(), type(err).__name__)
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return DeviceErrors(Counter(), (lines[-1] if lines else f"exit {done.returncode}")[:160])
    found = json.loads(done.stdout.decode("utf-8"))
    return DeviceErrors(Counter((Path(f).name, message) for f, message in found))
