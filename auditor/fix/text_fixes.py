"""Fixes in manifests, containers, scripts and build files: the fix's regex and replacement (data, in
rules/fixes/*.toml) applied to the finding's line, or a line added after it."""
from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from functools import cache

from auditor.fix.data import FixSpec
from auditor.fix.edits import FileFix, FixContext, NO_CONTEXT
from auditor.types import Finding

DEFAULT_ROCM = "6.4"     # rocm/dev-ubuntu-* image tag and PyTorch ROCm index when no torch pin says otherwise
# The ROCm build each PyTorch release was published for on download.pytorch.org (torch minor -> rocmX.Y).
TORCH_ROCM = {"2.0": "5.4.2", "2.1": "5.6", "2.2": "5.7", "2.3": "6.0", "2.4": "6.1", "2.5": "6.2",
              "2.6": "6.2.4", "2.7": "6.3", "2.8": "6.4", "2.9": "6.4"}
_ROCM_IMAGE = re.compile(r"(rocm/dev-[\w.-]+):(\d+\.\d+(?:\.\d+)?)")
_TORCH_PIN = re.compile(r"\b(torch|torchvision|torchaudio)\s*===?\s*(\d+)\.(\d+)")


def fix_text(text: str, findings: Sequence[Finding], specs: dict[str, FixSpec],
             context: FixContext = NO_CONTEXT) -> FileFix:
    lines = text.splitlines(keepends=True)
    applied: list[Finding] = []
    skipped: list[tuple[Finding, str]] = []
    added: dict[int, str] = {}          # line index -> text to insert after it
    for finding in sorted(findings, key=lambda f: f.span.line or 0):
        spec = specs[finding.rule_id]
        index = (finding.span.line or 0) - 1
        if not 0 <= index < len(lines):
            skipped.append((finding, "the finding has no line"))
            continue
        line = lines[index]
        if spec.only_where and not re.search(spec.only_where, text, re.MULTILINE):
            skipped.append((finding, spec.only_where_why))
            continue
        if spec.not_on and re.search(spec.not_on, line):
            skipped.append((finding, spec.not_on_why))
            continue
        if _in_message_or_comment(line, spec):
            skipped.append((finding, "in a comment or the text of a message: nothing runs it"))
            continue
        if spec.action == "add-line":
            reason = _add_line(spec, lines, index, text, added)
        else:
            assert spec.pattern is not None and spec.replacement is not None   # fix/data.py requires both
            replacement = _fill(spec.replacement, line, text)
            if replacement is None:
                skipped.append((finding, "no known ROCm build of the pinned torch version"))
                continue
            new = re.sub(spec.pattern, replacement, line, count=1)
            reason = None if new != line else "the line has no form this fix knows"
            if reason is None and (missing := _unknown_image(line, new)):
                skipped.append((finding, missing))
                continue
            lines[index] = new
        if reason:
            skipped.append((finding, reason))
        else:
            applied.append(finding)
    for index in sorted(added, reverse=True):
        lines.insert(index + 1, added[index])
    return FileFix("".join(lines), tuple(applied), tuple(skipped))


def _add_line(spec: FixSpec, lines: list[str], index: int, text: str, added: dict[int, str]) -> str | None:
    assert spec.pattern is not None and spec.replacement is not None   # fix/data.py requires both
    match = re.search(spec.pattern, lines[index])
    if match is None:
        return "the line has no form this fix knows"
    line = match.expand(spec.replacement.replace("\\n", "\n"))
    key = line.split("#")[0].split("(")[-1].split()[0] if "(" in line else line.strip()
    if key in text:
        return f"{key} is already set in this file"
    end = _statement_end(lines, index)
    eol = "\r\n" if lines[end].endswith("\r\n") else "\n"
    if not lines[end].endswith("\n"):
        lines[end] += eol
    added[end] = line + eol
    return None


def _in_message_or_comment(line: str, spec: FixSpec) -> bool:
    match = re.search(spec.pattern or "", line)
    before = line[: match.start()] if match else line
    return "#" in before.split('"')[0].split("'")[0] and not before.lstrip().startswith("FROM") \
        or bool(re.search(r"(?:^|[\s;&|(])(?:echo|printf|print|log|warn|die)\b", before))


def _unknown_image(old: str, new: str) -> str | None:
    """A ROCm image the fix would write that the shipped table (rules/fixes/rocm_images.toml) does not list."""
    images = rocm_images()
    for name, tag in _ROCM_IMAGE.findall(new):
        if (name, tag) in _ROCM_IMAGE.findall(old):
            continue
        if name not in images.get(tag, ()):
            offered = ", ".join(sorted(images.get(tag, ()))) or "none"
            return (f"{name}:{tag} does not exist (ROCm {tag} images: {offered}): the base's OS has no ROCm {tag} "
                    "image, so the base is for a person to choose")
    return None


_UBUNTU = re.compile(r"ubuntu-?(\d\d)\.04")


def rocm_job_suggestion(line: str) -> str:
    """What to put in the ROCm job a person adds beside an NVIDIA CI job: an image of the shipped table for the
    job's Ubuntu release (else the table's images for the default release) and how a container gets AMD GPUs."""
    offered = sorted(rocm_images().get(DEFAULT_ROCM, ()))
    found = _UBUNTU.search(line)
    same_os = [image for image in offered if found and image.endswith(f"ubuntu-{found.group(1)}.04")]
    images = " or ".join(f"{image}:{DEFAULT_ROCM}" for image in (same_os or offered))
    return (f"for the ROCm job, on an AMD GPU runner: image {images}, "
            "docker flags --device=/dev/kfd --device=/dev/dri --group-add video")


@cache
def rocm_images() -> dict[str, frozenset[str]]:
    """ROCm release -> the rocm/dev-* images published for it, from rules/fixes/rocm_images.toml."""
    from auditor.match.rulebook import rules_root

    data = tomllib.loads((rules_root() / "fixes" / "rocm_images.toml").read_text(encoding="utf-8"))
    return {str(r["rocm"]): frozenset(r["images"]) for r in data.get("release", ())}


def _statement_end(lines: list[str], index: int) -> int:
    """The last line of a parenthesised CMake command starting at `index`."""
    depth = 0
    for end in range(index, min(len(lines), index + 50)):
        code = lines[end].split("#")[0]
        depth += code.count("(") - code.count(")")
        if depth <= 0:
            return end
    return index


def _fill(replacement: str, line: str, text: str) -> str | None:
    """The replacement with its placeholders: {rocm} the ROCm release of a base image, {torch_rocm} the ROCm
    release PyTorch's wheels of the pinned version were built for (the line's pin, else the file's, else the
    default when nothing is pinned). None when the pinned torch has no ROCm build we know of (a nightly, a
    release newer than the table): guessing would pin a wheel that does not exist."""
    filled = replacement.replace("{rocm}", DEFAULT_ROCM)
    if "{torch_rocm}" not in filled:
        return filled
    pins = _TORCH_PIN.findall(line) or _TORCH_PIN.findall(text)
    if not pins:
        return filled.replace("{torch_rocm}", DEFAULT_ROCM)
    found = _torch_rocm(line) or _torch_rocm(text)
    return None if found is None or ".dev" in line else filled.replace("{torch_rocm}", found)


def _torch_rocm(text: str) -> str | None:
    for package, major, minor in _TORCH_PIN.findall(text):
        if package == "torchvision":       # torchvision 0.18 goes with torch 2.3
            major, minor = "2", str(int(minor) - 15)
        found = TORCH_ROCM.get(f"{major}.{minor}")
        if found:
            return found
    return None

