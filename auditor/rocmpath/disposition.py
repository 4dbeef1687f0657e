"""A disposition for every finding (docs/concepts.md, Dispositions): where it sits against the ROCm
path. Only `live` findings decide the verdict; nothing is dropped."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePosixPath

from auditor.inputs.kinds import OPS_KINDS, PYTHON_CODE
from auditor.rocmpath.model import SAME_SOURCES, ProjectBuild
from auditor.rocmpath.optinlibs import library_macro
from auditor.rocmpath.pyreach import optional_modules_of
from auditor.rocmpath.reader import owner
from auditor.rocmpath.redefine import uses
from auditor import types
from auditor.rulebook.schema import DependencyMatch
from auditor.truth.switches import shipped
from auditor.types import Finding, Rule, Severity

LIVE = types.LIVE                    # the dispositions the gate weighs are defined with Finding.would_break
VERIFY = types.VERIFY
GUARDED = "guarded"
OPS = "ops"
OPTIONAL = "optional"
SHIM = "shim-mapping"
OTHER_VENDOR = "other-vendor-backend"
PROJECT_MACRO = types.PROJECT_MACRO
OPTIONAL_FEATURE = "optional feature"
ALTERNATIVE = "cuda-only source, ROCm builds an alternative"
# rules testing compiler or version macros that HIPIFY renames (RA848, RA849): guarded where the component hipifies
HIPIFY_RENAMED_TESTS = frozenset({"cuda-compiler-test", "cuda-version-chain-without-fallback"})
NOT_BUILT = "not built"
CUDA_BRANCH = "CUDA branch of a build script"
TOOLING = "repo tooling"
INTEGRATION_NOTE = "an optional integration: not a dependency, and `import` of the package never loads this module"

DISPOSITIONS = (LIVE, VERIFY, GUARDED, PROJECT_MACRO, OPTIONAL, OPTIONAL_FEATURE, ALTERNATIVE, NOT_BUILT,
                CUDA_BRANCH, SHIM, OTHER_VENDOR, OPS, TOOLING)

# (`packaging/`: release-wheel build scripts, as in torchao and torchvision; the default install never runs them)
OPS_DIRS = {".github", ".gitlab", ".circleci", "docker", "dockerfiles", "ci", ".ci", "scripts", "tools", "dev",
            ".buildkite", "jenkins", "devtools", "packaging"}
SOFT_CATEGORIES = {"warp_size_assumption", "runtime_check"}
VENDOR_DIRS = re.compile(r"(?i)^(?:nvidia|cuda|sycl|metal|vulkan|xpu|intel|npu|tpu|mps|cann|musa|opencl)$")
ROCM_DIRS = re.compile(r"(?i)^(?:rocm|hip|amd|amdgpu)$|(?:^|_)rocm(?:_|$)|^hip_|_hip$")


def _ops(path: str, kind: str) -> bool:
    if kind in OPS_KINDS:
        return True
    return any(part.lower() in OPS_DIRS for part in PurePosixPath(path).parts[:-1])


def _written_for_rocm(path: str) -> bool:
    p = PurePosixPath(path)
    return p.suffix == ".hip" or any(ROCM_DIRS.search(part) for part in p.parts[:-1]) \
        or bool(re.search(r"(?i)(?:^|_)rocm(?:_|\.|$)|^hip_", p.name))


def _is_soft(finding: Finding, rule: Rule | None) -> bool:
    category = rule.category if rule else ""
    return category in SOFT_CATEGORIES or finding.severity <= Severity.MEDIUM


def _shipped(path: str, packages: frozenset[str]) -> bool:
    return any(path.startswith(p + "/") for p in packages)


def _package_name(subject: str) -> str:
    return re.split(r"[.\[=<>~! ;]", subject.strip(), maxsplit=1)[0].lower().replace("-", "_")


def dispose(
    finding: Finding, kind: str, rule: Rule | None, project: ProjectBuild, comp: str, optional_dir: bool,
    hard_deps: frozenset[str] = frozenset(),   # rule ids
    optional_modules: frozenset[str] = frozenset(),   # shipped files `import <package>` never loads (pyreach)
) -> tuple[str, str]:
    """(disposition, note) for one finding of a file of this kind in this component: the first that applies of
    what keeps it off the default install, what maps it for the ROCm build, and what the ROCm build does with
    its file; else live."""
    return (_off_the_default_install(finding, kind, rule, project, comp, optional_dir, hard_deps, optional_modules)
            or _mapped_for_rocm(finding, kind, rule, project, comp)
            or _against_the_rocm_build(finding, kind, rule, project, comp)
            or (LIVE, ""))


def _off_the_default_install(
    finding: Finding, kind: str, rule: Rule | None, project: ProjectBuild, comp: str, optional_dir: bool,
    hard_deps: frozenset[str], optional_modules: frozenset[str],
) -> tuple[str, str] | None:
    """Guarded code, CI and tooling, another vendor's backend, optional parts and integrations, requirement
    sets the install does not read, the CUDA branch of a build script."""
    path = finding.path
    if finding.guarded:
        if finding.disposition == PROJECT_MACRO:   # set by the scan (auditor/parsing/guardmacros.py)
            return PROJECT_MACRO, finding.disposition_note
        return GUARDED, ""
    if _ops(path, kind) or (rule is not None and rule.category == "container"):
        return OPS, "CI, container or developer script"
    if any(path == v or path.startswith(v + "/") for v in project.vendor_backends) \
            and project.provenance.get(path) not in ("both", "rocm"):   # ggml-cuda/, which ggml-hip compiles
        return OTHER_VENDOR, "another vendor's backend beside the ROCm one"
    if finding.optional or optional_dir or project.components.get(comp) in ("secondary", "optional"):
        return OPTIONAL, "a declared extra, an optional directory or a separate distribution" \
            if project.components.get(comp) != "secondary" else f"{comp}/ is a separate distribution"
    if path in optional_modules and rule is not None and rule.category == "cuda_only_python_package" \
            and finding.rule_id not in hard_deps:
        return OPTIONAL, INTEGRATION_NOTE
    integration = getattr(rule.spec, "integration", None) if rule is not None else None
    if integration and integration not in project.dependencies:
        return OPTIONAL, f"an optional integration: the default install does not require `{integration}`"
    if path in project.unread_requirements:
        return OPTIONAL, "a requirement set the package's own install does not read"
    lines = project.cuda_build_lines.get(path)
    if lines and finding.span.line in lines:
        return CUDA_BRANCH, "only the CUDA configuration of this build runs this line"
    if kind in ("python", "notebook") and PurePosixPath(path).name != "setup.py" \
            and "op_builder" not in PurePosixPath(path).parts:
        packages = project.shipped_python.get(comp, frozenset())
        if packages and not _shipped(path, packages):
            return TOOLING, "Python outside the shipped packages"
    return None


def _mapped_for_rocm(finding: Finding, kind: str, rule: Rule | None, project: ProjectBuild,
                     comp: str) -> tuple[str, str] | None:
    """A shim header, a name the project redefines for the ROCm build, a `__CUDACC__` test HIPIFY renames, a file
    written for ROCm."""
    path = finding.path
    if rule is not None and comp in project.hipified and rule.name in HIPIFY_RENAMED_TESTS \
            and not any(uses(name, finding.snippet) for name in shipped().hipify_kept):
        return GUARDED, ("this component's ROCm build runs HIPIFY, which renames `__CUDACC__` to `__HIPCC__` and "
                         "`CUDA_VERSION` to `HIP_VERSION`")
    if path in project.shims:
        return SHIM, "the shim header that maps CUDA names for the HIP build"
    if kind in ("cuda", "cpp"):
        for name, where in project.rocm_redefinitions.get(comp, {}).items():
            if uses(name, finding.snippet):
                return SHIM, f"the project redefines `{name}` for the ROCm build ({where})"
    if kind in ("cuda", "cpp") and _written_for_rocm(path):
        return GUARDED, "written for ROCm"
    return None


def _against_the_rocm_build(
    finding: Finding, kind: str, rule: Rule | None, project: ProjectBuild, comp: str,
) -> tuple[str, str] | None:
    """Where the finding's file and line sit in a verified ROCm build: fenced off, opt-in, compiled only for CUDA
    (with or without an alternative), not built at all, or compiled by it (to verify, or a broken path)."""
    path = finding.path
    rocm = project.paths.get(comp)
    verified = rocm is not None and rocm.verified
    if path in project.fenced and verified:
        return OPTIONAL_FEATURE, f"the op is fenced off on ROCm ({project.fenced[path]})"
    if path in project.optional_builds:   # auditor/rocmpath/pytolerant.py
        return OPTIONAL_FEATURE, project.optional_builds[path]
    line = finding.span.line or 0
    uncalled = next((u for u in project.not_called.get(path, ()) if u.first <= line <= u.last), None)
    if uncalled is not None:   # auditor/rocmpath/pycalls.py
        return OPTIONAL_FEATURE, uncalled.note
    if finding.span.line in project.optional_lines.get(path, ()):
        if kind == "python":   # auditor/engines/python/envoptin.py
            return OPTIONAL_FEATURE, "behind an environment switch a default install leaves off (an opt-in)"
        return OPTIONAL_FEATURE, "behind a macro the default build leaves undefined (an opt-in or debug switch)"
    role = project.provenance.get(path)
    tolerated = project.tolerated_artifacts.get(project.cuda_only_artifact_files.get(path, ""))
    if verified and role == "cuda" and tolerated:
        return OPTIONAL_FEATURE, (f"only the CUDA build compiles this file, and the package runs without "
                                  f"`{project.cuda_only_artifact_files[path]}`: its imports tolerate a failure "
                                  f"({tolerated})")
    if verified and role == "cuda" and path in project.cuda_only_artifact_files:
        return LIVE, (f"only the CUDA build compiles this file, and the ROCm build has no counterpart for "
                      f"`{project.cuda_only_artifact_files[path]}`")
    if verified and rocm is not None and role == "cuda":
        if rocm.rocm_artifacts or any(e.pattern in SAME_SOURCES for e in rocm.evidence):
            return ALTERNATIVE, "only the CUDA configuration compiles this file; the ROCm build compiles other sources"
    if verified and role == "other-backend":
        return OTHER_VENDOR, "another vendor's backend"
    if verified and role == "opt-in":
        if _is_soft(finding, rule) and finding.severity > Severity.INFO:
            return VERIFY, "in an op the ROCm path compiles on first use"
        return OPTIONAL_FEATURE, "an opt-in part of the build (an op compiled on first use)"
    if verified and role == "unreferenced":
        return NOT_BUILT, "no build configuration lists or includes this file"
    if verified and rule is not None and rule.name == "cuda-build-switch-gate":
        cuda_only = sorted(name for name in project.cuda_macros if uses(name, finding.snippet))
        if cuda_only:
            return LIVE, f"only the CUDA build defines `{cuda_only[0]}`: the ROCm build compiles this gate's other side"
        return GUARDED, "the ROCm build compiles this, and its build files do not keep the switch CUDA-only"
    if verified and kind in ("manifest", "build") and rule is not None and rule.category == "build_system" \
            and Severity.INFO < finding.severity <= Severity.MEDIUM:
        return VERIFY, "a CUDA build setting of a build that also has a ROCm configuration"
    if verified and (role in ("both", "rocm") or kind in ("python", "notebook")) and _is_soft(finding, rule) \
            and finding.severity > Severity.INFO:
        return VERIFY, "in code the ROCm build already compiles or runs"
    if verified and role in ("both", "rocm") and finding.severity > Severity.MEDIUM:
        return LIVE, "the ROCm build compiles this file: a broken path"
    return None


def assign(
    findings: Sequence[Finding], kinds: dict[str, str], rules: dict[str, Rule], project: ProjectBuild,
    optional_dir, comps: Sequence[str], scanned_imports: Mapping[str, tuple[str, ...]],
) -> list[Finding]:
    """`scanned_imports`: each scanned Python file's unguarded imports (FileFacts.imports)."""
    hard_deps = frozenset(   # rules naming a package the project declares as a hard dependency
        f.rule_id for f in findings
        if kinds.get(f.path) == "manifest" or PurePosixPath(f.path).name == "setup.py"
        if not f.optional and f.path not in project.unread_requirements and rules.get(f.rule_id) is not None
        and rules[f.rule_id].category == "cuda_only_python_package"
        and not _ops(f.path, kinds.get(f.path, ""))
        and not any(f.path == v or f.path.startswith(v + "/") for v in project.vendor_backends))
    # computed from the project build model, never written into it (it parses every shipped module: only when a
    # finding needs it)
    optional_modules = optional_modules_of(project, scanned_imports) if any(
        kinds.get(f.path) == "python" and rules.get(f.rule_id) is not None
        and rules[f.rule_id].category == "cuda_only_python_package" for f in findings) else frozenset()
    out = []
    for f in findings:
        comp = owner(f.path, comps)
        disposition, note = dispose(f, kinds.get(f.path, ""), rules.get(f.rule_id), project, comp,
                                    optional_dir(f.path, comp), hard_deps, optional_modules)
        # `guarded` the flag and `guarded` the disposition are one thing (code written for ROCm too)
        f = replace(f, disposition=disposition, disposition_note=note, guarded=disposition == GUARDED)
        out.append(_opt_in_library(f, rules.get(f.rule_id), project))
    return _within_optional_integrations(out, kinds)



def _opt_in_library(finding: Finding, rule: Rule | None, project: ProjectBuild) -> Finding:
    """A CUDA-only library with no ROCm equivalent that the project uses only behind its own opt-in macro
    (auditor/rocmpath/optinlibs.py): still reported, as port work (fence the include out of the default build)."""
    if finding.disposition != LIVE or finding.severity != Severity.CRITICAL or rule is None \
            or rule.category != "cuda_only_library" or not (tested := project.opt_in_tests.get(finding.path)):
        return finding
    macro = library_macro(finding.subject, tested)
    if macro is None:
        return finding
    note = (f"an opt-in: the project uses this library only behind `{macro}`, which its default build leaves "
            "undefined; fence the include out of the default build")
    return replace(finding, severity=Severity.HIGH, disposition_note=note,
                   message=f"{finding.message} Here {note}.")


def _within_optional_integrations(findings: list[Finding], kinds: dict[str, str]) -> list[Finding]:
    """A Python module that imports an optional NVIDIA integration is part of it: what else it does (CuTe-DSL
    inline PTX beside `import cutlass`) is as optional as the import."""
    integrations = {f.path for f in findings if f.disposition == OPTIONAL and f.disposition_note == INTEGRATION_NOTE}
    return [replace(f, disposition=OPTIONAL, disposition_note=f"part of an optional integration ({f.path} imports it)")
            if f.path in integrations and f.disposition == LIVE and kinds.get(f.path) in PYTHON_CODE
            else f for f in findings]


def own_package_finding(finding: Finding, rule: Rule | None, project: ProjectBuild) -> bool:
    """The project importing (or requiring) its own package is never a package finding: not a CUDA-only package,
    not an unmaintained one, whatever the rule's category."""
    if rule is None or not project.own_packages:
        return False
    names_packages = isinstance(rule.spec, DependencyMatch) and bool(rule.spec.imports or rule.spec.pypi)
    if rule.category != "cuda_only_python_package" and not names_packages:
        return False
    return _package_name(finding.subject) in {p.lower().replace("-", "_") for p in project.own_packages}


def own_package_rules(rules: Iterable[Rule], own_packages: frozenset[str]) -> frozenset[str]:
    """Rules every finding of which own_package_finding would drop: dependency rules naming only the project's own
    packages (deepspeed's `deepspeed.ops` imports, scanning deepspeed). Not run at all: most files of such a
    project import it, and each would otherwise take the whole Python rule walk for nothing."""
    own = {p.lower().replace("-", "_") for p in own_packages}
    dropped = set()
    for rule in rules:
        spec = rule.spec
        if not isinstance(spec, DependencyMatch) or spec.local_version or spec.index_url \
                or not (spec.imports or spec.pypi):
            continue
        names = [_package_name(m) for m in spec.imports] + [_package_name(p) for p in spec.pypi]
        if all(name in own and not any(ch in name for ch in "*?[") for name in names):
            dropped.add(rule.id)
    return frozenset(dropped)
