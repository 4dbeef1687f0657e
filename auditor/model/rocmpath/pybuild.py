"""A Python build script (`setup.py`, an op builder) read in the ROCm configuration, with `ast`; never run.

ROCm PyTorch is installed (`torch.version.hip` truthy, `torch.version.cuda` None), environment variables
are at their defaults. Each `if` is a ROCm branch (its test implies ROCm: a ROCm atom, possibly and-ed with
unknowns), a CUDA branch (its test is false on ROCm, or it is the first arm of a chain whose later arm is
the ROCm one), or neither. Helpers called only from CUDA branches are CUDA branches too.
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import functools
import re
from dataclasses import dataclass, field

from auditor.match.engines.python.guards import binds_what_follows_reads
from auditor.parse.python import flatten
from auditor.model.rocmpath.branches import only_refuses, only_says
from auditor.model.rocmpath.pymacros import macro_edits
from auditor.model.rocmpath.pypaths import spelled_strings
from auditor.model.rocmpath.pynames import defaults_on_rocm, derived_truth, extension_classes, set_only_by_opt_in
from auditor.model.rocmpath.pytruth import Truth
from auditor.truth.python import dotted
from auditor.truth.python import PythonPersona, shipped_persona
from auditor.truth.markers import hip_macro, setup_cuda_configuration, setup_rocm, setup_strong

SOURCE = re.compile(r"\.(?:cu|cuh|cpp|cc|cxx|c|hip|h|hpp)$|\*")
DEFINE = re.compile(r"^-D([A-Za-z_]\w*)")
FLAG = re.compile(r"^--?[A-Za-z][\w=.,+-]*$")   # one compiler option, never a sentence
EXTENSIONS = re.compile(r"(?:^|\.)(?:CUDAExtension|CppExtension|Extension|HIPExtension)$")

ROCM, CUDA = "rocm", "cuda"
MAX_REREADS = 3     # flags set only in CUDA branches of flags set only in CUDA branches…

@dataclass
class PyBuild:
    """What one build script does in each configuration."""

    path: str
    rocm_tests: list[int] = field(default_factory=list)            # lines of tests that select the ROCm branch
    evidence: list[tuple[int, str]] = field(default_factory=list)  # ROCm compile evidence inside ROCm branches
    refusals: list[int] = field(default_factory=list)              # ROCm branches that only raise or exit
    hipify: list[int] = field(default_factory=list)                # explicit hipify calls
    sources: dict[str, set[str]] = field(default_factory=dict)     # source string -> {"rocm","cuda","both"}
    artifacts: dict[str, set[str]] = field(default_factory=dict)   # extension name -> configurations
    artifact_sources: dict[str, set[str]] = field(default_factory=dict)  # extension name -> source strings
    artifact_lines: dict[tuple[str, str], int] = field(default_factory=dict)  # (name, configuration) -> line
    rocm_macros: set[str] = field(default_factory=set)
    cuda_macros: set[str] = field(default_factory=set)
    cuda_lines: set[int] = field(default_factory=set)             # lines of CUDA branches
    opt_in_lines: set[int] = field(default_factory=set)   # lines of branches no vendor's default install takes
    fenced_on_rocm: list[int] = field(default_factory=list)       # is_compatible()-style fences false on ROCm
    calls_setup: bool = False
    uses_cuda_extension: bool = False

    @property
    def builds_on_rocm(self) -> bool:
        return bool(self.rocm_tests) and bool(self.evidence or self.hipify or self.rocm_artifacts)

    @property
    def rocm_artifacts(self) -> set[str]:
        return {name for name, where in self.artifacts.items() if where & {ROCM, "both"}}


def _names_cuda_configuration(test: ast.AST) -> bool:
    """`torch.version.cuda`, `is_cuda()`, `'cu' in torch.__version__`: not merely a toolkit probe (`CUDA_HOME`)."""
    return any(isinstance(n, (ast.Name, ast.Attribute)) and setup_cuda_configuration(dotted(n))
               for n in ast.walk(test))


def _builds_extension(node: ast.AST) -> bool:
    return any(isinstance(sub, ast.Call) and EXTENSIONS.search(dotted(sub.func)) for sub in ast.walk(node))


class _Reader:
    def __init__(self, path: str, tree: ast.Module, unset: frozenset[str] = frozenset(),
                 switches: PythonPersona | None = None, kept: frozenset[str] = frozenset(),
                 opt_in_names: frozenset[str] = frozenset()):
        self.build = PyBuild(path)
        self.tree = tree
        self.nodes = flatten(tree)   # every node, once: the passes below each go over all of them
        self.truth = derived_truth(self.nodes, unset, switches, kept)
        self._switches = switches
        self._unset_opt_in, self._kept_opt_in = unset & opt_in_names, kept & opt_in_names
        self._unset_by_vendor = unset - opt_in_names
        self.opt_in: list[tuple[int, int]] = []   # (first, last line) of branches only an opt-in takes
        self.extension_names = extension_classes(self.nodes, EXTENSIONS)
        self.around: dict[int, tuple[list[ast.stmt], int]] = {}   # id of an `if` -> its block and place in it
        for node in self.nodes:
            for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
                if isinstance(block, list):
                    for index, stmt in enumerate(block):
                        if isinstance(stmt, ast.If):
                            self.around[id(stmt)] = (block, index)
        self.regions: list[tuple[int, int, str]] = []   # (first, last line, configuration)
        self.cuda_bodies: list[tuple[int, int]] = []    # the CUDA regions that are branches, not tests
        self._by_line: list[str] = []
        self._painted_regions = -1

    @functools.cached_property
    def _vendor_truth(self) -> Truth:
        """The reading with what every GPU machine passes (`torch.cuda.is_available()`) and every default install
        leaves off (an opt-in flag) unknown: a test true on ROCm only through such a fact is true on CUDA too, so it
        selects no vendor's build. Made only for a script with a test true on ROCm."""
        persona = self._switches if self._switches is not None else shipped_persona()
        return derived_truth(self.nodes, self._unset_by_vendor, dataclasses.replace(persona, true_calls=frozenset()))

    @functools.cached_property
    def _opt_in_truth(self) -> Truth:
        """The reading on any vendor's default install: only its vendor-neutral facts, and the names at their
        default because of them."""
        persona = self._switches if self._switches is not None else shipped_persona()
        return derived_truth(self.nodes, self._unset_opt_in, persona.vendor_neutral(), self._kept_opt_in)

    def mark(self, body: list[ast.stmt], config: str) -> None:
        if body:
            first, last = body[0].lineno, max(getattr(s, "end_lineno", s.lineno) or s.lineno for s in body)
            self.regions.append((first, last, config))
            if config == CUDA:
                self.cuda_bodies.append((first, last))

    def classify(self) -> None:
        for node in self.nodes:
            if isinstance(node, ast.If):
                self._if(node)
            elif isinstance(node, ast.IfExp):
                self._ifexp(node)
            elif isinstance(node, (ast.FunctionDef, ast.Module)) or hasattr(node, "body"):
                body = getattr(node, "body", None)
                if isinstance(body, list):
                    self._early_exit(body)
        self._cuda_only_helpers()

    def _if(self, node: ast.If) -> None:
        value = self.truth.of(node.test)
        if value is True or self.truth.implies_rocm(node.test):
            if self._vendor_truth.of(node.test) is True or self._vendor_truth.implies_rocm(node.test):
                self.build.rocm_tests.append(node.lineno)
            self.mark(node.body, ROCM)
            if only_refuses(node.body):
                self.build.refusals.append(node.lineno)
            if value is True:
                self.mark(node.orelse, CUDA)
        elif value is False:
            self.mark(node.body, CUDA)
            if node.body and self._opt_in_truth.of(node.test) is False:
                self.opt_in.append((node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno))
            block, index = self.around.get(id(node), ([], 0))
            # (a test naming the CUDA configuration itself, `'cu' in torch.__version__`, builds it for CUDA by intent)
            # (an else that only prints or warns drops it as silently: `else: print("building without CUDA")`)
            drops_extension = (not node.orelse or only_says(node.orelse)) \
                and not _names_cuda_configuration(node.test) and any(_builds_extension(stmt) for stmt in node.body)
            # `if CUDA_HOME is not None: return` decides whether ROCm goes on to what follows (apex: a raise)
            decides_the_rest = isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
            # `if … and CUDA_HOME is not None: <CUDA build> else: raise` (Deformable-DETR): ROCm goes to the refusal
            refused = bool(node.orelse) and only_refuses(node.orelse)
            if not (drops_extension or decides_the_rest or refused) \
                    and not binds_what_follows_reads(node.body, block[:index], block[index + 1:]):
                # the CUDA test itself
                self.regions.append((node.test.lineno, node.test.end_lineno or node.test.lineno, CUDA))
            if node.orelse and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
                self.mark(node.orelse, ROCM)
                self.build.rocm_tests.append(node.lineno)
                if only_refuses(node.orelse):
                    self.build.refusals.append(node.lineno)
        else:
            branch = node.orelse
            while len(branch) == 1 and isinstance(branch[0], ast.If):
                if self.truth.implies_rocm(branch[0].test):
                    self.mark(node.body, CUDA)
                    return
                branch = branch[0].orelse

    def _ifexp(self, node: ast.IfExp) -> None:
        """`CUDAExtension if (use_cuda or use_rocm) else CppExtension`: the arm a ROCm build takes, when it names
        a GPU extension class or carries ROCm compile evidence, is a ROCm selection (its test line is the evidence; an
        expression's arms share lines, so they are not painted as line regions)."""
        value = self.truth.of(node.test)
        if value is None:
            return
        arm = node.body if value else node.orelse
        # a CppExtension arm is the CPU build a ROCm machine falls back to, not a ROCm build
        gpu_class = isinstance(arm, (ast.Name, ast.Attribute)) and EXTENSIONS.search(dotted(arm)) is not None \
            and "Cpp" not in dotted(arm).split(".")[-1]
        if gpu_class or any(setup_rocm(text) for _, text in spelled_strings(ast.walk(arm))):
            self.build.rocm_tests.append(node.lineno)
            if gpu_class and "CUDA" in dotted(arm):
                # ROCm PyTorch hipifies and compiles a CUDAExtension: the project builds its extension for HIP
                self.build.evidence.append((node.lineno, f"{dotted(arm)} if {ast.unparse(node.test)}"))

    def _early_exit(self, body: list[ast.stmt]) -> None:
        for index, stmt in enumerate(body[:-1]):
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body \
                    and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                if self.truth.of(stmt.test) is True:
                    if not only_refuses(stmt.body):
                        # (after a refusal, `if CUDA_HOME is None: raise`, comes what a port makes ROCm run)
                        self.mark(body[index + 1:], CUDA)
                    return
                if self.truth.of(stmt.test) is False:
                    self.mark(body[index + 1:], ROCM)
                    return

    def _cuda_only_helpers(self) -> None:
        """Functions and methods (`f()`, `self.f()`) called only from CUDA branches; twice, for helpers of
        helpers."""
        functions: dict[str, list[ast.FunctionDef]] = {}
        for node in self.nodes:
            if isinstance(node, ast.FunctionDef):
                functions.setdefault(node.name, []).append(node)
        marked: set[str] = set()
        for _ in range(2):
            called: dict[str, set[str]] = {}
            for node in self.nodes:
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) \
                        and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls") else None
                    if name in functions:
                        called.setdefault(name, set()).add(self.config_at(node.lineno))
            for name, configs in called.items():
                if configs == {CUDA} and name not in marked:
                    marked.add(name)
                    for definition in functions[name]:
                        self.mark(definition.body, CUDA)

    def config_at(self, line: int) -> str:
        """The innermost region holding the line (the first marked of equally long ones)."""
        if self._painted_regions != len(self.regions):
            self._paint()
        return self._by_line[line] if 0 <= line < len(self._by_line) else "both"

    def _paint(self) -> None:
        """Each line's configuration, looked up in constant time: regions painted longest first, so the innermost
        wins (a loop over every region for every line is quadratic in a large build script)."""
        size = max((last for _, last, _ in self.regions), default=0) + 1
        by_line = ["both"] * size
        order = sorted(range(len(self.regions)), key=lambda i: (self.regions[i][0] - self.regions[i][1], -i))
        for i in order:
            first, last, config = self.regions[i]
            by_line[first:last + 1] = [config] * (last + 1 - first)
        self._by_line, self._painted_regions = by_line, len(self.regions)

    def collect(self) -> PyBuild:
        build = self.build
        for first, last, config in self.regions:
            if config == CUDA:
                build.cuda_lines.update(range(first, last + 1))
        for first, last in self.opt_in:
            build.opt_in_lines.update(range(first, last + 1))
        for node in self.nodes:
            if isinstance(node, (ast.Name, ast.Attribute)) and dotted(node).split(".")[-1] == "CUDAExtension" or \
                    isinstance(node, ast.ImportFrom) and any(a.name == "CUDAExtension" for a in node.names):
                build.uses_cuda_extension = True
            if isinstance(node, ast.Call):
                name = dotted(node.func)
                if name.endswith("setup") and name.split(".")[-1] == "setup":
                    build.calls_setup = True
                if "hipify" in name.lower():
                    build.hipify.append(node.lineno)
                if EXTENSIONS.search(name) or name in self.extension_names:
                    build.uses_cuda_extension = build.uses_cuda_extension or "CUDA" in name
                    self._extension(node)
            elif isinstance(node, ast.FunctionDef) and node.name == "is_compatible":
                self._fence(node)
        for line, text in spelled_strings(self.nodes):
            config = self.config_at(line)
            macro = DEFINE.match(text)
            if config == ROCM and (setup_rocm(text) or (macro or FLAG.match(text)) and build.uses_cuda_extension):
                # a -D (or any compiler) flag for the ROCm branch of a CUDAExtension build (fused-ssim's
                # `-ffast-math`): ROCm PyTorch hipifies and compiles that extension (P3), and the project configures
                # it for HIP
                build.evidence.append((line, text))
            if macro:
                target = build.rocm_macros if config == ROCM else build.cuda_macros if config == CUDA else set()
                target.add(macro.group(1))
            if SOURCE.search(text) and "/" in text or text.endswith((".cu", ".hip")):
                build.sources.setdefault(text.lstrip("./"), set()).add(config)
        self._macro_lists()
        self._variables()
        # a test inside a branch the ROCm build does not take decides nothing for it (`if not OPT_IN: ... if
        # CUDA_HOME is None: raise`)
        build.rocm_tests = sorted(line for line in build.rocm_tests if not self._in_cuda_branch(line))
        build.refusals = [line for line in build.refusals if not self._in_cuda_branch(line)]
        build.evidence.sort(key=lambda e: (not setup_strong(e[1]), e[0]))
        return build

    def _in_cuda_branch(self, line: int) -> bool:
        return any(first <= line <= last for first, last in self.cuda_bodies)

    def _macro_lists(self) -> None:
        """The project's macros of each configuration from `define_macros`/`undef_macros` edits; on the ROCm branch
        of a CUDAExtension build, evidence that the extension is configured for HIP (torch_scatter, nerfacc)."""
        build = self.build
        for line, kind, macro in macro_edits(self.nodes):
            config = self.config_at(line)
            if kind == "define":
                (build.rocm_macros if config == ROCM else build.cuda_macros if config == CUDA else set()).add(macro)
            if config == ROCM and build.uses_cuda_extension and (kind == "define" or hip_macro(macro)):
                build.evidence.append((line, f"-{kind[0].upper()}{macro}"))

    def _variables(self) -> None:
        """A list of sources held in a variable belongs to the configurations that add it to the build
        (`sources += source_cuda` in the CUDA branch), not to where it was globbed."""
        held: dict[str, set[str]] = {}
        for node in self.nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if _builds_extension(node.value):   # `setup_kwargs = {"ext_modules": [CUDAExtension(...)]}`
                    continue
                texts = {t.lstrip("./") for _, t in spelled_strings(ast.walk(node.value)) if SOURCE.search(t)}
                if texts:
                    held.setdefault(node.targets[0].id, set()).update(texts)
        used: dict[str, set[str]] = {}
        for node in self.nodes:
            added: list[ast.expr] = []
            if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
                added = [node.value]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "extend":
                added = list(node.args)
            elif isinstance(node, ast.Call) and (EXTENSIONS.search(dotted(node.func))
                                                 or dotted(node.func).lower().endswith("extension")):
                added = [k.value for k in node.keywords if k.arg == "sources"] + node.args[1:2]
            for value in added:
                for sub in ast.walk(value):
                    if isinstance(sub, ast.Name) and sub.id in held:
                        used.setdefault(sub.id, set()).add(self.config_at(getattr(node, "lineno", 0)))
        for name, texts in held.items():
            configs = used.get(name)
            for text in texts:
                if text not in self.build.sources:
                    continue
                if configs is None:   # globbed or listed, never added to a build: an exclusion list, a filter
                    if not any(text in other for n, other in held.items() if n in used):
                        del self.build.sources[text]
                elif configs != {"both"}:
                    self.build.sources[text] = set(configs)

    def _extension(self, node: ast.Call) -> None:
        config = self.config_at(node.lineno)
        name = next((k.value.value for k in node.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)),
                    None)
        if name is None and node.args and isinstance(node.args[0], ast.Constant):
            name = node.args[0].value
        if isinstance(name, str):
            self.build.artifacts.setdefault(name, set()).add(config)
            self.build.artifact_lines.setdefault((name, config), node.lineno)
            self.build.artifact_sources.setdefault(name, set()).update(
                text.lstrip("./") for _, text in spelled_strings(ast.walk(node)) if SOURCE.search(text))

    def _fence(self, node: ast.FunctionDef) -> None:
        """`def is_compatible(...): if is_rocm_pytorch(): return False`: this op is off on ROCm."""
        for sub in ast.walk(node):
            if isinstance(sub, ast.If) and self.truth.of(sub.test) is True:
                returns = [s for s in sub.body if isinstance(s, ast.Return)]
                if returns and isinstance(returns[-1].value, ast.Constant) and returns[-1].value.value is False:
                    self.build.fenced_on_rocm.append(sub.lineno)


def read_python_build_text(path: str, text: str, switches: PythonPersona | None = None) -> PyBuild | None:
    """read_python_build of the text parsed here, remembered by (path, text): `history` reads the same build scripts
    at every point. A copy each time, so a caller that changes its PyBuild cannot change another's."""
    return copy.deepcopy(_read_remembered(path, text, switches))


@functools.lru_cache(maxsize=256)
def _read_remembered(path: str, text: str, switches: PythonPersona | None) -> PyBuild | None:
    return read_python_build(path, text, switches=switches)


def read_python_build(path: str, text: str, tree: ast.Module | None = None,
                      switches: PythonPersona | None = None) -> PyBuild | None:
    """`tree`: the text already parsed (the caller's parse), else it is parsed here; `switches`: guards.toml's
    [python] names of the run's rulebook (the shipped ones when None)."""
    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    reader = _Reader(path, tree, switches=switches)
    reader.classify()
    unset: set[str] = set()
    kept: set[str] = set()
    opt_in: set[str] = set()
    for _ in range(MAX_REREADS):   # read again with those names at their default: what they gate is decided too
        falsy, truthy = defaults_on_rocm(reader.nodes, reader.config_at, reader.truth)
        more_unset, more_kept = falsy - reader.truth.cuda_names, truthy - kept
        if not (more_unset or more_kept):
            break
        unset |= more_unset
        kept |= more_kept
        opt_in |= set_only_by_opt_in(reader.nodes, reader.config_at, reader.opt_in, more_unset | more_kept)
        reader = _Reader(path, tree, frozenset(unset), switches, frozenset(kept), frozenset(opt_in))
        reader.classify()
    return reader.collect()
