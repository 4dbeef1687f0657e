"""The reach model of one run: built once from the sealed project build model (auditor/model/rocmpath/) and the scan's
per-file facts, frozen, and asked `reach(path, line)` for each finding's place."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from auditor.model.places import in_packages, is_ops, under, written_for_rocm
from auditor.model.reach import Confidence, Reach, Step
from auditor.model.rocmpath.pycalls import Uncalled, not_called_by_default
from auditor.model.rocmpath.model import SAME_SOURCES, ProjectBuild
from auditor.model.rocmpath.pyreach import optional_modules_of
from auditor.model.rocmpath.reader import owner
from auditor.model.rocmpath.redefine import CUDA_NAME, uses
from auditor.truth.switches import shipped
from auditor.types import PROJECT_MACRO, FileResult, Finding, Rule
from auditor.util.purepaths import pure

PACKAGE_CATEGORY = "cuda_only_python_package"
STALE_TRAIT = "stale-hip"   # auditor/match/rulebook/traits.py
OPTIONAL_NOTE = "a declared extra, an optional directory or a separate distribution"
INTEGRATION_NOTE = "an optional integration: not a dependency, and `import` of the package never loads this module"


@dataclass(frozen=True, slots=True)
class ReachModel:
    """What the default ROCm install reaches, for the whole run. `optional_dir(path, component)`: the file is in a
    directory whose name makes it optional (tests, examples) for that component."""

    project: ProjectBuild
    kinds: Mapping[str, str]
    components: tuple[str, ...]
    optional_dir: Callable[[str, str], bool]
    optional_lines: Mapping[str, frozenset[int]] = field(default_factory=dict)
    optional_modules: frozenset[str] = frozenset()    # shipped modules `import <package>` never loads
    required_rules: frozenset[str] = frozenset()      # package rules naming a hard dependency of the install
    hipify_kept: tuple[str, ...] = ()                 # macros HIPIFY leaves false on ROCm
    # component -> path:line of what ROCm 6 removed that its HIP build uses (rules with the `stale-hip` trait)
    stale: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Python file -> the functions no code the default install runs calls (model/rocmpath/pycalls.py)
    not_called: Mapping[str, tuple[Uncalled, ...]] = field(default_factory=dict)
    gpu_free: frozenset[str] = frozenset()            # components whose default ROCm build compiles no GPU source

    @classmethod
    def of(cls, project: ProjectBuild, results: Sequence[FileResult], findings: Sequence[Finding],
           rules: Mapping[str, Rule], optional_dir: Callable[[str, str], bool]) -> "ReachModel":
        kinds = MappingProxyType({r.path: r.kind for r in results})
        lines = {path: frozenset(found) for path, found in project.optional_lines.items()}
        for r in results:   # each Python module's environment opt-ins, found by the Python engine in the workers
            if r.facts.opt_in_lines:
                lines[r.path] = lines.get(r.path, frozenset()) | frozenset(r.facts.opt_in_lines)
        base = cls(project, kinds, tuple(sorted(project.components) or ["."]), optional_dir,
                   MappingProxyType(lines), hipify_kept=shipped().hipify_kept)
        packages = [f for f in findings if (rule := rules.get(f.rule_id)) is not None
                    and rule.category == PACKAGE_CATEGORY]
        # parsing every shipped module is costly: only when a Python package finding needs it
        optional = optional_modules_of(project, {r.path: r.facts.imports for r in results if r.kind == "python"},
                                       base.program_imports(results)) \
            if any(kinds.get(f.path) == "python" for f in packages) else frozenset()
        required = frozenset(f.rule_id for f in packages if base.declares_hard_dependency(f))
        stale: dict[str, list[str]] = {}
        for f in findings:
            if (rule := rules.get(f.rule_id)) is not None and STALE_TRAIT in rule.traits and not f.guarded:
                stale.setdefault(base.component(f.path), []).append(f"{f.path}:{f.span.line}")
        packaged = {p for packages in project.shipped_python.values() for p in packages}
        not_called = not_called_by_default({r.path: r.facts.functions for r in results if r.kind == "python"},
                                           packaged)
        return cls(base.project, kinds, base.components, optional_dir, base.optional_lines, optional, required,
                   base.hipify_kept, MappingProxyType({c: tuple(sites) for c, sites in stale.items()}),
                   MappingProxyType(not_called), base.gpu_free_components())

    def program_imports(self, results: Sequence[FileResult]) -> frozenset[str]:
        """What the project's own programs import: its Python files outside the shipped packages and optional
        directories (`tools/train.py`), whose `from pkg.models import build` reaches `pkg.models` as a
        user's program would."""
        out: set[str] = set()
        for r in results:
            comp = self.component(r.path)
            packages = self.project.shipped_python.get(comp, frozenset())
            if r.kind == "python" and packages and not in_packages(r.path, packages) \
                    and pure(r.path).name != "setup.py" and not self.optional_dir(r.path, comp):
                out.update(r.facts.imports)
        return frozenset(out)

    def gpu_free_components(self) -> frozenset[str]:
        """The components whose default ROCm build compiles no GPU source (ProjectBuild.skipped_by_default)."""
        project = self.project
        building = {self.component(path) for path, kind in self.kinds.items()
                    if kind == "cuda" and not project.skipped_by_default(path)}
        return frozenset(c for c in self.components if c not in building)

    def declares_hard_dependency(self, finding: Finding) -> bool:
        """A package finding in a manifest or setup.py the install reads, outside CI and other vendors' parts."""
        kind = self.kinds.get(finding.path, "")
        return (kind == "manifest" or pure(finding.path).name == "setup.py") and not finding.optional \
            and finding.path not in self.project.unread_requirements and not is_ops(finding.path, kind) \
            and not any(under(finding.path, v) for v in self.project.vendor_backends)

    def component(self, path: str) -> str:
        return owner(path, self.components)

    def reach(self, path: str, line: int | None) -> Reach:
        """Every fact the model knows about `path:line`, in the order the layers are met."""
        comp = self.component(path)
        kind = self.kinds.get(path, "")
        steps = self._placement(path, line, comp, kind) + self._mapping(path, comp, kind) \
            + self._rocm_build(path, line, comp, kind)
        return Reach(path, line, comp, steps)

    def reach_of(self, finding: Finding, rule: Rule | None) -> Reach:
        """The reach of a finding's line, with what its scan and its rule add: its guard, an optional import, the
        package whose API it is, and the names in its text the ROCm build maps or keeps CUDA-only."""
        found = self.reach(finding.path, finding.span.line)
        return found.with_steps(self._scanned(finding, rule) + self._names(finding, found.component))

    def _placement(self, path: str, line: int | None, comp: str, kind: str) -> tuple[Step, ...]:
        project = self.project
        role = project.provenance.get(path)
        steps: list[Step] = []
        if is_ops(path, kind):
            steps.append(Step("ops-path", False, "CI, container or developer script"))
        elif path in project.unrun_scripts:
            steps.append(Step("unrun-script", False, "a developer script: no build file pip runs names it"))
        if role not in ("both", "rocm") and any(under(path, v) for v in project.vendor_backends):
            steps.append(Step("vendor-backend", False, "another vendor's backend beside the ROCm one"))
        host = project.included_by_parts.get(path)   # compiled only through another component's includes
        part = project.components.get(host or comp)
        through = f" (compiled only through the includes of {host}/)" if host else ""
        needed = project.required_parts.get(host or comp)
        if part == "secondary" and needed:
            steps.append(Step("required-part", True, needed))
        elif part == "secondary":
            steps.append(Step("separate-distribution", False,
                              f"{host or comp}/ is a separate distribution{through}"))
        elif part == "optional":
            steps.append(Step("optional-part", False, OPTIONAL_NOTE + through))
        if self.optional_dir(path, comp):
            steps.append(Step("optional-dir", False, OPTIONAL_NOTE))
        if path in self.optional_modules:
            steps.append(Step("never-imported", False, INTEGRATION_NOTE))
        if path in project.unread_requirements:
            steps.append(Step("unread-requirements", False,
                              "a requirement set the package's own install does not read"))
        if line in project.cuda_build_lines.get(path, ()):
            steps.append(Step("cuda-build-branch", False, "only the CUDA configuration of this build runs this line",
                              f"{path}:{line}"))
        if kind in ("python", "notebook") and pure(path).name != "setup.py" \
                and "op_builder" not in pure(path).parts:
            packages = project.shipped_python.get(comp, frozenset())
            if packages and not in_packages(path, packages):
                steps.append(Step("not-packaged", False, "Python outside the shipped packages"))
        return tuple(steps)

    def _mapping(self, path: str, comp: str, kind: str) -> tuple[Step, ...]:
        project = self.project
        steps: list[Step] = []
        if comp in project.hipified:
            steps.append(Step("hipified-component", True, "this component's ROCm build runs HIPIFY, which renames "
                              "`__CUDACC__` to `__HIPCC__` and `CUDA_VERSION` to `HIP_VERSION`"))
        if path in project.shims:
            steps.append(Step("shim-header", True, "the shim header that maps CUDA names for the HIP build"))
        if kind in ("cuda", "cpp") and written_for_rocm(path):
            steps.append(Step("written-for-rocm", True, "written for ROCm"))
        return tuple(steps)

    def _rocm_build(self, path: str, line: int | None, comp: str, kind: str) -> tuple[Step, ...]:
        """The fences, opt-ins and provenance of the component's verified ROCm build."""
        project = self.project
        rocm = project.paths.get(comp)
        verified = rocm is not None and rocm.verified
        steps: list[Step] = []
        if verified and path in project.fenced:
            steps.append(Step("fenced", False, f"the op is fenced off on ROCm ({project.fenced[path]})",
                              project.fenced[path]))
        if path in project.optional_builds:   # model/rocmpath/pytolerant.py
            steps.append(Step("optional-build", False, project.optional_builds[path]))
        uncalled = next((u for u in self.not_called.get(path, ()) if u.first <= (line or 0) <= u.last), None)
        if uncalled is not None:
            steps.append(Step("not-called", False, uncalled.note))
        if line in self.optional_lines.get(path, ()):
            steps.append(Step("opt-in-line", False,
                              "behind an environment switch a default install leaves off (an opt-in)"
                              if kind == "python" else
                              "behind a macro the default build leaves undefined (an opt-in or debug switch)"))
        steps += self._built_by_import(path, comp, kind)
        jit, required = project.jit_built.get(path), project.required_builds.get(path)
        if rocm is None or not verified:
            return tuple(steps)
        built = Confidence.LOW if comp in self.stale else Confidence.MEDIUM
        role = project.provenance.get(path)
        if (jit or required) and role in (None, "opt-in", "unreferenced"):
            role = "both"     # the import builds it, or needs it built, whatever the install's own build lists
        artifact = project.cuda_only_artifact_files.get(path, "")
        tolerated = project.tolerated_artifacts.get(artifact)
        if role == "cuda" and tolerated:
            steps.append(Step("tolerated-artifact", False, (
                f"only the CUDA build compiles this file, and the package runs without `{artifact}`: its imports "
                f"tolerate a failure ({tolerated})"), tolerated, built))
        elif role == "cuda" and artifact:
            steps.append(Step("no-rocm-counterpart", False, (
                f"only the CUDA build compiles this file, and the ROCm build has no counterpart for `{artifact}`"),
                confidence=built))
        elif role == "cuda" and (rocm.rocm_artifacts or any(e.pattern in SAME_SOURCES for e in rocm.evidence)):
            steps.append(Step("rocm-alternative", False, "only the CUDA configuration compiles this file; the ROCm "
                              "build compiles other sources", confidence=built))
        elif role == "other-backend":
            steps.append(Step("other-backend-source", False, "another vendor's backend", confidence=built))
        elif role == "opt-in":
            steps.append(Step("opt-in-op", None, "an opt-in part of the build (an op compiled on first use)",
                              confidence=built))
        elif role == "unreferenced":
            steps.append(Step("unreferenced", False, "no build configuration lists or includes this file",
                              confidence=built))
        elif role in ("both", "rocm"):
            steps.append(Step("rocm-built", True, "the ROCm build compiles this file", confidence=built))
        steps.append(Step("rocm-path-verified", True, "its component has a verified ROCm path",
                          rocm.evidence[0].where if rocm.evidence else "", built))
        if kind in ("manifest", "build"):
            steps.append(Step("rocm-build-file", True, "a build file of a build that also has a ROCm configuration",
                              confidence=built))
        if kind in ("python", "notebook"):
            steps.append(Step("rocm-runs", True, "code the ROCm path runs", confidence=built))
        return tuple(steps)

    def _built_by_import(self, path: str, comp: str, kind: str) -> list[Step]:
        """What importing the package builds or needs built (a JIT load, a second setup script's extension), and
        a manifest of a component whose default ROCm build compiles no GPU source."""
        project = self.project
        steps: list[Step] = []
        jit = project.jit_built.get(path)
        if jit:
            steps.append(Step("jit-built", True, f"built when the package is imported ({jit} compiles it; ROCm "
                              "PyTorch hipifies it)", jit))
        required = project.required_builds.get(path)
        if required:
            steps.append(Step("required-build", True, required))
        if kind == "manifest" and comp in self.gpu_free:
            steps.append(Step("no-gpu-build", False, "the default ROCm build compiles no GPU source: whichever torch "
                              "the build installs, it compiles only CPU code"))
        return steps

    def _scanned(self, finding: Finding, rule: Rule | None) -> tuple[Step, ...]:
        steps: list[Step] = []
        if finding.guarded and finding.disposition == PROJECT_MACRO:   # set by the scan (parse/guardmacros.py)
            steps.append(Step("project-macro", False, finding.disposition_note))
        elif finding.guarded:
            steps.append(Step("guard", False))
        if finding.optional:
            steps.append(Step("optional-import", False, OPTIONAL_NOTE))
        integration = getattr(rule.spec, "integration", None) if rule is not None else None
        if integration and integration not in self.project.dependencies:
            steps.append(Step("unrequired-integration", False,
                              f"an optional integration: the default install does not require `{integration}`"))
        return tuple(steps)

    def _names(self, finding: Finding, comp: str) -> tuple[Step, ...]:
        """The names in the finding's text the ROCm build maps (redefines), keeps (HIPIFY leaves), or that only
        the CUDA build defines."""
        snippet = finding.snippet
        steps: list[Step] = []
        if self.kinds.get(finding.path) in ("cuda", "cpp"):
            for name, where in self.project.rocm_redefinitions.get(comp, {}).items():
                # a CUDA-shaped name maps every line using it; another (`atomicAdd_block`) only the finding on it
                if uses(name, snippet) if CUDA_NAME.match(name) else finding.subject == name:
                    steps.append(Step("redefined-name", True,
                                      f"the project redefines `{name}` for the ROCm build ({where})", where))
                    break
        if any(uses(name, snippet) for name in self.hipify_kept):
            steps.append(Step("hipify-kept", False))
        cuda_only = sorted(name for name in self.project.cuda_macros if uses(name, snippet))
        if cuda_only:
            steps.append(Step("cuda-only-switch", False, f"only the CUDA build defines `{cuda_only[0]}`: the ROCm "
                              "build compiles this gate's other side"))
        return tuple(steps)
