"""`fix --verify`: compile each touched `.cu` before and after its fixes with the compilers this machine has. For
CUDA, nvcc's PTX for the old and the new text must be byte-identical (PTX is text and stable for identical
source: the fix changes nothing on the CUDA build) once the ids nvcc hashes from the file's text into
anonymous-namespace names are normalised. For ROCm, hipcc (HIP_PLATFORM=amd) must compile the new text
at least as well as the old; where hipcc is absent or older than HIP 6.2 (no `*_sync` functions, so it cannot judge
a mask), a libclang device check against newer HIP headers (auditor/fix/hipdevice.py) must find no new error. A
file that fails either check is rolled back. The sources are compiled as copies
under the same name in a private directory, with the original directory and the scanned root on the include
path; nothing from the scanned tree chooses the command (the flags are fixed here), and nothing is run."""
from __future__ import annotations

import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from pathlib import Path

from auditor.fix.home import settle
from auditor.fix.outcome import FileOutcome, FixRun
from auditor.fix.includes import IncludeRefused, check_includes
from auditor.fix.include_paths import existing_in_tree
from auditor.fix.ptx_ids import normalise_internal_ids
from auditor.fix.hipdevice import (OFFLOAD_ARCH, OLDEST_SYNC_HIP, HipDeviceCheck, device_errors,
                                   find_hip_device_check)

COMPILE_SECONDS = 300
HEADERS = (".h", ".hpp", ".cuh", ".hh", ".hxx", ".inl")
UNITS = (".cu",)
MAX_UNIT_BYTES = 16 * 1024 * 1024
NVCC_FLAGS = ("-ptx", "-std=c++17", "-arch=sm_80", "-w")
HIPCC_FLAGS = ("-std=c++17", f"--offload-arch={OFFLOAD_ARCH}", "-x", "hip", "-c", "-w")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Compiler:
    name: str
    path: str
    version: str

    def describe(self) -> str:
        return f"{self.name} ({self.version}) at {self.path}"


@dataclass(frozen=True, slots=True)
class Verdict:
    problem: str | None       # why the file's fixes are rolled back; None when they pass
    note: str                 # what was checked, for the summary
    cuda: bool = False        # nvcc compiled it before and after, with the same output
    rocm: bool = False        # hipcc or the HIP device check judged it (no new error)


def find_compilers() -> tuple[Compiler | None, Compiler | None]:
    """(nvcc, hipcc) found on PATH, each with the first line of its --version that names a release."""
    found = []
    for name in ("nvcc", "hipcc"):
        path = shutil.which(name)
        found.append(Compiler(name, path, _version(path)) if path else None)
    return found[0], found[1]


def hip_release(hipcc: Compiler) -> tuple[int, int] | None:
    found = _HIP_VERSION.search(hipcc.version)
    return (int(found.group(1)), int(found.group(2))) if found else None


@dataclass(frozen=True, slots=True)
class Overlay:
    """Files as the fix run would leave them, by path relative to the root, that a compile reads instead of the
    tree's (`before` for the old text, `after` for the new): the header of the fixer's definitions, or the header
    a translation unit is compiled for."""

    before: Mapping[str, str] = field(default_factory=dict)
    after: Mapping[str, str] = field(default_factory=dict)
    include_dirs: tuple[str, ...] = ()        # the project's include paths, relative to the root


def verify_file(path: Path, root: Path, old: str, new: str, nvcc: Compiler | None,
                hipcc: Compiler | None, device: HipDeviceCheck | None = None, overlay: Overlay = Overlay(),
                include_dirs: tuple[str, ...] = ()) -> Verdict:
    """`path`: a translation unit of the tree; `old` and `new` its texts, compiled with `overlay`'s files and the
    project's include paths (`include_dirs`, relative to the root, after the file's own directory)."""
    overlay = replace(overlay, include_dirs=include_dirs)
    try:
        check_includes(old, path, root, include_dirs, overlay.before)
        check_includes(new, path, root, include_dirs, overlay.after)
    except IncludeRefused as err:
        return Verdict(None, f"not compiled: {err}")
    notes: list[str] = []
    cuda = rocm = False
    if nvcc is not None:
        before, after = _compile_both(nvcc, NVCC_FLAGS, path, root, old, new, ptx=True, overlay=overlay)
        if before.output is None:
            notes.append(f"nvcc cannot compile it alone ({before.error}): CUDA output not compared")
        elif _comparable(after.output) != _comparable(before.output):
            return Verdict("nvcc's PTX differs after the fix: it would change the CUDA build", "")
        else:
            notes.append("nvcc PTX identical")
            cuda = True
    if hipcc is not None:
        before, after = _compile_both(hipcc, HIPCC_FLAGS, path, root, old, new, ptx=False, overlay=overlay)
        if before.output is not None and after.output is None:
            return Verdict(f"hipcc compiled it before the fix but not after ({after.error})", "")
        rocm = after.output is not None
        notes.append("hipcc compiles it" if after.output is not None else f"hipcc does not compile it either way "
                     f"({after.error})")
    elif device is not None:
        before_errors, after_errors = (device_errors(device, path, root, text, files, include_dirs)
                                       for text, files in (
            (old, overlay.before), (new, overlay.after)))
        if before_errors.failure or after_errors.failure:
            notes.append(f"HIP device check did not finish ({before_errors.failure or after_errors.failure})")
        elif new_error := after_errors.first(before_errors.errors):
            return Verdict(f"the HIP device check finds a new error after the fix ({new_error})", "")
        elif gone := before_errors.first(after_errors.errors):
            rocm = True
            removed = sum((before_errors.errors - after_errors.errors).values())
            notes.append(f"HIP device check: {removed} error(s) fewer ({gone[:90]})"
                         + (f", {sum(after_errors.errors.values())} left" if after_errors.errors else ", none left"))
        else:
            rocm = not after_errors.errors   # the same errors before and after: the check could not read the code
            notes.append("HIP device check clean" if not after_errors.errors else
                         f"HIP device check could not judge it: the same {sum(after_errors.errors.values())} error(s) "
                         f"before and after ({after_errors.first()[:90]})")
    return Verdict(None, "; ".join(notes), cuda, rocm)


@dataclass(frozen=True, slots=True)
class _Result:
    output: bytes | None
    error: str = ""


def _compile_both(compiler: Compiler, flags: tuple[str, ...], path: Path, root: Path, old: str, new: str,
                  ptx: bool, overlay: Overlay = Overlay()) -> tuple[_Result, _Result]:
    """The old and the new text compiled one after the other as the same file in the same directory: nvcc
    hashes the compile directory and file into internal-linkage names, so nothing else may differ. The file
    sits at its place in a private copy of the tree's layout that holds only it and the overlay's files; the
    tree's own directories come after on the include path."""
    with tempfile.TemporaryDirectory(prefix="rocm-audit-verify-") as scratch:
        return (_compile(compiler, flags, path, root, old, Path(scratch), ptx, overlay.before, overlay.include_dirs),
                _compile(compiler, flags, path, root, new, Path(scratch), ptx, overlay.after, overlay.include_dirs))


def _compile(compiler: Compiler, flags: tuple[str, ...], path: Path, root: Path, text: str, scratch: Path,
             ptx: bool, files: Mapping[str, str] = MappingProxyType({}), include_dirs: tuple[str, ...] = ()) -> _Result:
    tree = scratch / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    relative = _relative(path, root)
    source = tree / relative
    for name, content in {**files, relative.as_posix(): text}.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(content, encoding="utf-8")
    out = scratch / ("out.ptx" if ptx else "out.o")
    out.unlink(missing_ok=True)
    # each directory first as the private copy, where an edited header is read as the run leaves it: the project's
    # include paths, then the directories of the overlay's files (for the headers beside them)
    dirs = [*include_dirs, *(posixpath.dirname(name) or "." for name in files)]
    searched = [arg for name in dict.fromkeys(dirs) for arg in ("-I", str(tree / name), "-I", str(root / name))]
    command = [compiler.path, *flags, "-I", str(path.parent), *searched, "-I", str(tree), "-I", str(root),
               str(source),
               "-o", str(out)]
    env = {**os.environ, "HIP_PLATFORM": "amd"} if compiler.name == "hipcc" else None
    try:
        done = subprocess.run(command, capture_output=True, timeout=COMPILE_SECONDS, cwd=scratch, env=env,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return _Result(None, type(err).__name__)
    if done.returncode != 0 or not out.exists():
        lines = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines() if "error" in ln]
        return _Result(None, (lines[0] if lines else f"exit {done.returncode}").replace(str(scratch), "")[:160])
    return _Result(out.read_bytes())


def _relative(path: Path, root: Path) -> Path:
    try:
        return path.resolve().relative_to(root.resolve())
    except ValueError:
        return Path(path.name)


def _comparable(ptx: bytes | None) -> bytes | None:
    """PTX with the ids of internal-linkage names normalised: they hold a hash of the compile directory and, in
    some units, nvcc's process id, which differ between two compiles of the same code."""
    return None if ptx is None else normalise_internal_ids(ptx)


def _version(path: str) -> str:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return "version unknown"
    lines = [ln.strip() for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    named = [ln for ln in lines if "release" in ln.lower() or "version" in ln.lower()]
    return (named or lines or ["version unknown"])[0][:100]


UNCHECKED = "neither compiler could check it (--keep-unchecked writes it anyway)"


def verify_run(run: FixRun, keep_unchecked: bool = False) -> tuple[FixRun, str]:
    """Each changed C/C++/CUDA file of the run compiled before and after; (the run with failing files rolled back,
    and unchecked ones too unless `keep_unchecked`, the lines that say what was checked with what)."""
    nvcc, hipcc = find_compilers()
    old_hipcc = hipcc if hipcc is not None and (hip_release(hipcc) or (0, 0)) < OLDEST_SYNC_HIP else None
    usable_hipcc = None if old_hipcc is not None else hipcc
    device, no_device = (None, "") if usable_hipcc is not None else find_hip_device_check()
    outcomes = []
    counts = {"both": 0, "nvcc": 0, "rocm": 0, "neither": 0}
    home = next((o for o in run.files if o.path == run.home and o.changed), None)
    home_files = Overlay({home.path: home.old} if home and not home.created else {},
                         {home.path: home.new} if home else {})
    changed = {o.path: o for o in run.files if o.changed}
    home_files = replace(home_files, include_dirs=existing_in_tree(list(run.include_dirs), run.root))
    for outcome in run.files:
        if outcome.changed and outcome.applied and outcome.path.endswith(UNITS):
            verdict = verify_file(Path(outcome.abspath), run.root, outcome.old, outcome.new, nvcc, usable_hipcc,
                                  device, home_files, home_files.include_dirs)
        elif outcome.changed and outcome.applied and outcome.path.endswith(HEADERS):
            verdict = _through_a_unit(outcome, run, changed, home_files, nvcc, usable_hipcc, device)
        else:
            outcomes.append(outcome)
            continue
        edits = len(outcome.applied)
        kind = "both" if verdict.cuda and verdict.rocm else "nvcc" if verdict.cuda else \
            "rocm" if verdict.rocm else "neither"
        if verdict.problem:
            outcome = replace(outcome, new=outcome.old, applied=(), rolled_back=verdict.problem)
        elif kind == "neither" and not keep_unchecked:
            outcome = replace(outcome, new=outcome.old, applied=(), rolled_back=f"{UNCHECKED}: {verdict.note}")
            counts[kind] += edits
        else:
            counts[kind] += edits
            outcome = replace(outcome, note="; ".join(n for n in (outcome.note, verdict.note) if n) or None)
        outcomes.append(outcome)
    checked = (f"Checked edits: {counts['both']} by nvcc and the ROCm check, {counts['nvcc']} by nvcc only, "
               f"{counts['rocm']} by the ROCm check only, {counts['neither']} by neither"
               + (" (written: --keep-unchecked)" if keep_unchecked and counts["neither"] else
                  " (not written)" if counts["neither"] else "") + ".")
    used = _used_line(nvcc, hipcc, old_hipcc, device, no_device)
    return replace(run, files=tuple(settle(outcomes, run.home))), checked + "\n" + used


def _through_a_unit(header: FileOutcome, run: FixRun, changed: Mapping[str, FileOutcome], home: Overlay,
                    nvcc: Compiler | None, hipcc: Compiler | None, device: HipDeviceCheck | None) -> Verdict:
    """A header's edits compiled through a translation unit of the tree that includes it (the first by path)."""
    units = [path for path in run.includers.get(header.path, ()) if path.endswith(UNITS)]
    if not units:
        return Verdict(None, "a header no .cu of the tree includes directly: not compiled")
    unit = units[0]
    if unit in changed:
        old, new = changed[unit].old, changed[unit].new
    else:
        try:
            old = new = (run.root / unit).read_bytes()[:MAX_UNIT_BYTES].decode("utf-8")
        except (OSError, UnicodeDecodeError) as err:
            return Verdict(None, f"its unit {unit} cannot be read ({err})")
    verdict = verify_file(run.root / unit, run.root, old, new, nvcc, hipcc, device,
                          Overlay({**home.before, header.path: header.old}, {**home.after, header.path: header.new}),
                          home.include_dirs)
    return replace(verdict, note=f"through {unit}: {verdict.note}" if verdict.note else "")


def _used_line(nvcc: Compiler | None, hipcc: Compiler | None, old_hipcc: Compiler | None,
               device: HipDeviceCheck | None, no_device: str) -> str:
    used = [c.describe() for c in (nvcc, hipcc) if c is not None and c is not old_hipcc]
    used += [device.describe()] if device is not None else []
    line = "Verified with: " + ("; ".join(used) if used else "no compiler")
    if nvcc is None:
        line += "; nvcc not found (CUDA output not compared)"
    if old_hipcc is not None:
        line += f"; not used: {old_hipcc.describe()}, older than HIP 6.2 (no *_sync functions: it cannot judge masks)"
    elif hipcc is None:
        line += "; hipcc not found"
    if hipcc is None or old_hipcc is not None:
        line += "" if device is not None else f"; no HIP device check: {no_device} (the ROCm side is not compiled)"
    return line
