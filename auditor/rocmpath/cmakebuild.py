"""A CMakeLists.txt read in the ROCm configuration: the ROCm backend option on, every other
option at its default. Tracks if/elseif/else, `enable_language(HIP)`, backend subdirectories, compile
definitions and the sources each branch adds (a Makefile: auditor/rocmpath/makebuild.py)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from auditor.parsing.nesting import MAX_NESTING, too_deep

COMMAND = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)", re.DOTALL)
ROCM_WORD = re.compile(
    r"(?i)\b(?:USE_ROCM|USE_HIP|BUILD_ROCM|WITH_ROCM|ENABLE_ROCM|ENABLE_HIP|BUILD_HIP|ROCM_FOUND|HIP_FOUND|"
    r"\w+_HIP|HIP_\w*PLATFORM\w*|GPU_BACKEND_HIP)\b|\"(?:hip|rocm|amd)\""
)
CUDA_WORD = re.compile(r"(?i)\b(?:USE_CUDA|BUILD_CUDA|WITH_CUDA|ENABLE_CUDA|\w+_CUDA|CUDA_FOUND|CUDAToolkit_FOUND)\b"
                       r"|\"cuda\"")
OTHER_VENDOR = re.compile(r"(?i)\"(?:cpu|mps|xpu|sycl|metal|vulkan|opencl|npu|cann|musa)\""
                          r"|\b\w+_(?:SYCL|METAL|VULKAN|MUSA|CANN)\b")
EVIDENCE = re.compile(r"(?i)enable_language\s*\(\s*HIP|LANGUAGE\s+HIP|find_package\s*\(\s*hip|--offload-arch|"
                      r"-amdgpu|CMAKE_HIP_ARCHITECTURES|hip::|HIP_ARCHITECTURES|\bhipcc\b")
DEFINE = re.compile(r"(?:-D)?([A-Za-z_]\w*)(?:=\S*)?")
# a source file named in a command: a run of path characters ending in a source suffix. Found run by run (a
# `findall` of one pattern tries every start inside a long run: quadratic on 100 KB of path characters)
PATH_RUN = re.compile(r"[\w./*${}-]+")
SOURCE_SUFFIX = re.compile(r"\.(?:cu|cuh|cpp|cc|c|hip|h|hpp)(?!\w)")
NEGATION = re.compile(r"^\s*NOT\s+", re.IGNORECASE)
OR_WORD = re.compile(r"\bOR\b", re.IGNORECASE)
WORD = re.compile(r"\w+")
# `./a.cu` is `a.cu`; `../ggml-cuda/*.cu` keeps its `../` (provenance resolves it against the CMakeLists' directory)
LEADING_DOT_SLASH = re.compile(r"^(?:\./)+")
MAX_CONDITION_CHARS = 4096    # an if() test longer than this is not a backend switch: unknown, not searched

ROCM, CUDA, OTHER, BOTH, OPT_IN = "rocm", "cuda", "other-backend", "both", "opt-in"


@dataclass
class CBuild:
    path: str
    has_project: bool = False
    compiles_cu: bool = False
    rocm_tests: list[int] = field(default_factory=list)
    evidence: list[tuple[int, str]] = field(default_factory=list)
    refusals: list[int] = field(default_factory=list)
    rocm_macros: set[str] = field(default_factory=set)
    cuda_macros: set[str] = field(default_factory=set)
    optional_macros: set[str] = field(default_factory=set)
    sources: dict[str, set[str]] = field(default_factory=dict)        # source pattern -> configurations
    subdirs: dict[str, str] = field(default_factory=dict)             # add_subdirectory target -> configuration
    cuda_lines: set[int] = field(default_factory=set)
    opt_in_lines: set[int] = field(default_factory=set)
    rocm_option: str = ""                                             # the variable a ROCm user turns on
    partial: str = ""                                                 # why the file was not read to its end

    @property
    def builds_on_rocm(self) -> bool:
        return bool(self.evidence) and not (self.refusals and len(self.refusals) >= len(self.rocm_tests))


_STREQUAL = re.compile(r'^\s*(?:\$\{)?(\w+)\}?\s+STREQUAL\s+"?([^"\s]*)"?\s*$', re.IGNORECASE)


def _condition(text: str, rocm_vars: dict[str, str], shared: frozenset[str] | set[str] = frozenset()) -> str | None:
    """rocm, cuda, other-backend, or None (unknown) for the ROCm configuration. `rocm_vars`: variables a ROCm branch
    sets, with the value set there; `shared`: those other branches set to a true value too (no ROCm marker by name,
    though their value still tells `STREQUAL` tests apart)."""
    if len(text) > MAX_CONDITION_CHARS:
        return None
    negated = NEGATION.match(text) is not None
    core = NEGATION.sub("", text, count=1)
    if OR_WORD.search(core):
        return None
    words = set(WORD.findall(core))
    compared = _STREQUAL.match(core)
    if compared and rocm_vars.get(compared.group(1)):
        # `VLLM_GPU_LANG STREQUAL "CUDA"` where a ROCm branch sets it to "HIP": the value decides, not the name
        wanted = compared.group(2).upper()
        quoted = f'"{wanted}"'
        result = ROCM if wanted == rocm_vars[compared.group(1)] else CUDA if CUDA_WORD.search(quoted) \
            else OTHER if OTHER_VENDOR.search(quoted) else None
        if result is None:
            return None
    elif ROCM_WORD.search(core) or any(word in rocm_vars and word not in shared for word in words):
        result = ROCM
    elif OTHER_VENDOR.search(core):
        result = OTHER
    elif CUDA_WORD.search(core):
        result = CUDA
    else:
        return None
    if negated:
        return {ROCM: CUDA, CUDA: None, OTHER: None}[result]
    return result


def _code(line: str) -> str:
    """The line without its comment (a `#` outside quotes)."""
    quoted = False
    for index, char in enumerate(line):
        if char == '"':
            quoted = not quoted
        elif char == "#" and not quoted:
            return line[:index]
    return line


def _without_strings(text: str) -> str:
    """Each closed "string" (backslash escapes inside) as `""`; an unclosed quote and what follows it kept. One
    pass: a regex would retry the rest of the line from every unclosed quote."""
    out: list[str] = []
    last = 0
    start = text.find('"')
    while start >= 0:
        index = start + 1
        while index < len(text):
            char = text[index]
            if char == "\\":
                index += 2
                continue
            if char == '"':
                break
            index += 1
        if index >= len(text):
            break            # unclosed: no later quote closes either (this scan went over each of them)
        out.append(text[last:start] + '""')
        last = index + 1
        start = text.find('"', last)
    out.append(text[last:])
    return "".join(out)


def sources_named(code: str) -> list[str]:
    """What `[\\w./*${}-]+\\.(?:cu|…|hpp)\\b` finds, in linear time: in each run of path characters, the run up to
    its last source suffix (a greedy match), when something comes before that suffix."""
    out = []
    for run in PATH_RUN.finditer(code):
        text = run.group(0)
        if "." not in text:
            continue
        ends = [m.end() for m in SOURCE_SUFFIX.finditer(text) if m.start() > 0]
        if ends:
            out.append(text[:ends[-1]])
    return out


def _logical(text: str):
    """(first line, last line, command text) with multi-line commands joined (at most 200 lines)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start, joined = i, _code(lines[i])
        bare = _without_strings(joined)
        depth = bare.count("(") - bare.count(")")
        while depth > 0 and i + 1 < len(lines) and i - start < 200:
            i += 1
            piece = _code(lines[i])
            joined += " " + piece
            bare = _without_strings(piece)
            depth += bare.count("(") - bare.count(")")
        yield start + 1, i + 1, joined
        i += 1


def read_cmake(path: str, text: str) -> CBuild:
    lines = list(_logical(text))
    reading = _CMakeReading(CBuild(path), *_rocm_variables(lines))
    for first, last, code in lines:
        m = COMMAND.match(code)
        if not m:
            continue
        word, args = m.group(1).lower(), m.group(2).rsplit(")", 1)[0]
        if reading.branch(word, args, first):
            if reading.build.partial:
                break
            continue
        reading.command(word, args, code, first, last)
    build = reading.build
    if reading.unconditional_hip:
        build.rocm_tests.append(1)
    build.evidence.sort(key=lambda e: (_strength(e[1]), e[0]))
    return build


def _rocm_variables(lines: list[tuple[int, int, str]]) -> tuple[dict[str, str], set[str]]:
    """Variables set only inside ROCm branches are ROCm conditions too: (set on a ROCm branch -> the value set
    there, those set to a true value outside ROCm branches too). Two passes: a variable found in the first makes
    the branches it tests ROCm ones in the second."""
    rocm_vars: dict[str, str] = {}
    shared: set[str] = set()
    stack: list[list] = []          # [configuration of the current arm, whether a ROCm arm was seen]
    for _ in range(2):
        stack.clear()
        for _first, _last, code in lines:
            m = COMMAND.match(code)
            if not m:
                continue
            word, args = m.group(1).lower(), m.group(2).rsplit(")", 1)[0]
            if word == "if":
                if len(stack) >= MAX_NESTING:
                    break
                stack.append([_condition(args, rocm_vars, shared), False])
            elif word == "elseif" and stack:
                cond = _condition(args, rocm_vars, shared)
                if cond == ROCM and stack[-1][0] is None:
                    stack[-1][0] = CUDA  # if(BUILD_CUDA-ish unknown) … elseif(BUILD_HIP): the first arm is CUDA's
                stack[-1] = [cond, stack[-1][1] or stack[-1][0] == ROCM]
            elif word == "else" and stack:
                top = stack[-1]
                stack[-1] = [CUDA if top[0] == ROCM else ROCM if top[0] == CUDA and not top[1] else
                             (None if top[0] is None else OTHER if top[0] == OTHER else None), top[1]]
            elif word == "endif" and stack:
                stack.pop()
            elif word == "set":
                parts = args.split()
                name = parts[0] if parts else ""
                value = parts[1].strip('"').upper() if len(parts) > 1 else ""
                if not name or name.startswith("$") or value in ("", "OFF", "FALSE", "0", "NO", "N"):
                    continue
                if any(e[0] == ROCM for e in stack):
                    rocm_vars.setdefault(name, value)
                else:
                    shared.add(name)
    return rocm_vars, shared


class _CMakeReading:
    """The main pass: the open if() arms, and what each command says in the configuration its arm is for."""

    def __init__(self, build: CBuild, rocm_vars: dict[str, str], shared: set[str]) -> None:
        self.build, self.rocm_vars, self.shared = build, rocm_vars, shared
        self.stack: list[list] = []     # [configuration of the current arm, whether a ROCm arm was seen, elseif line]
        self.unconditional_hip = False
        self.option_seen = False

    def branch(self, word: str, args: str, first: int) -> bool:
        """if/elseif/else/endif: the arms' configurations and the ROCm tests; False for any other command (and
        an elseif/else/endif with no if open). Too deep a nesting marks the build partial."""
        build, stack = self.build, self.stack
        if word == "if":
            if len(stack) >= MAX_NESTING:
                build.partial = too_deep()
                return True
            cond = _condition(args, self.rocm_vars, self.shared)
            stack.append([cond, False])
            if cond == ROCM:
                build.rocm_tests.append(first)
                build.rocm_option = build.rocm_option or _option(args)
            return True
        if word == "elseif" and stack:
            cond = _condition(args, self.rocm_vars, self.shared)
            if cond == ROCM:
                build.rocm_tests.append(first)
                build.rocm_option = build.rocm_option or _option(args)
                if stack[-1][0] is None:
                    for n in range(_arm_start(stack[-1]), first):
                        build.cuda_lines.add(n)
            stack[-1] = [cond, stack[-1][1] or stack[-1][0] == ROCM]
            stack[-1].append(first)
            return True
        if word == "else" and stack:
            top = stack[-1]
            top[0] = CUDA if top[0] == ROCM else ROCM if top[0] == CUDA else (OTHER if top[0] == OTHER else None)
            return True
        if word == "endif" and stack:
            stack.pop()
            return True
        return False

    def command(self, word: str, args: str, code: str, first: int, last: int) -> None:
        """Lines only the CUDA configuration runs, the backend option, HIP evidence and refusals, compile
        definitions, backend subdirectories, the sources named, whether CUDA sources are compiled."""
        build = self.build
        config = _config(self.stack)
        if config == CUDA:
            build.cuda_lines.update(range(first, last + 1))
        if word == "option":
            name = args.split()[0] if args.split() else ""
            if re.fullmatch(r"\w*(?:HIP|ROCM|HIPBLAS)\w*", name) and not re.search(r"\bON\s*$", args):
                if not self.option_seen:   # the first default-OFF HIP option is the backend switch
                    build.rocm_option, self.option_seen = f"-D{name}=ON", True
        self._hip_evidence(word, args, code, first, config)
        if word in ("add_compile_definitions", "add_definitions", "target_compile_definitions"):
            self._definitions(args, config)
        if word == "add_subdirectory":
            target = args.split()[0].strip('"') if args.split() else ""
            build.subdirs[target] = subdir_config(target, config)
        for source in sources_named(code):
            build.sources.setdefault(LEADING_DOT_SLASH.sub("", source), set()).add(config)
        if config in (CUDA, BOTH) \
                and (re.search(r"\.cu\b|enable_language\s*\(\s*CUDA", code) or _languages_cuda(code)):
            build.compiles_cu = True

    def _hip_evidence(self, word: str, args: str, code: str, first: int, config: str) -> None:
        """A HIP project() or language, a ROCm arm's HIP setting, a ROCm arm's FATAL_ERROR (a refusal)."""
        build = self.build
        if word == "project":
            build.has_project = True
            if re.search(r"\bHIP\b", args):
                build.evidence.append((first, code.strip()))
                self.unconditional_hip = self.unconditional_hip or config == BOTH
        if EVIDENCE.search(code) and config in (ROCM, BOTH):
            build.evidence.append((first, code.strip()))
            if word == "enable_language" and config == BOTH:
                self.unconditional_hip = True
        if word == "message" and "FATAL_ERROR" in args and config == ROCM:
            build.refusals.append(first)

    def _definitions(self, args: str, config: str) -> None:
        """Macros defined for the ROCm build (on a ROCm arm, or everywhere once HIP is on unconditionally) or
        for the CUDA build only."""
        for token in args.split():
            d = DEFINE.fullmatch(token.strip('"'))
            if d and d.group(1) not in ("PRIVATE", "PUBLIC", "INTERFACE") and not token.startswith("$"):
                if config == ROCM or (config == BOTH and self.unconditional_hip):
                    self.build.rocm_macros.add(d.group(1))
                elif config == CUDA:
                    self.build.cuda_macros.add(d.group(1))


def _languages_cuda(code: str) -> bool:
    """`LANGUAGES[^)]*CUDA`, one scan (the pattern rescans to the `)` from every `LANGUAGES`)."""
    for piece in code.split(")"):
        at = piece.find("LANGUAGES")
        if at >= 0 and "CUDA" in piece[at + 9:]:
            return True
    return False


def _strength(text: str) -> int:
    for rank, pattern in enumerate((r"(?i)enable_language\s*\(\s*HIP", r"(?i)LANGUAGE\s+HIP",
                                    r"(?i)find_package\s*\(\s*hip", r"--offload-arch|CMAKE_HIP_ARCHITECTURES")):
        if re.search(pattern, text):
            return rank
    return 9


def _option(condition: str) -> str:
    """`-DGGML_HIP=ON` from `GGML_HIP`, `-DBACKEND=hip` from `BACKEND STREQUAL "hip"`."""
    m = re.search(r"(?<!\w)\$?\{?(\w+)\}?\s+STREQUAL\s+\"(hip|rocm|HIP|ROCM)\"", condition)
    if m:
        return f"-D{m.group(1).lstrip('$').strip('{}')}={m.group(2)}"
    m = re.fullmatch(r"\s*\$?\{?(\w+)\}?\s*", condition)
    return f"-D{m.group(1)}=ON" if m and not m.group(1).endswith("_FOUND") else ""


def _arm_start(top: list) -> int:
    return top[2] if len(top) > 2 else 0


def _config(stack: list[list]) -> str:
    configs = [entry[0] for entry in stack if entry[0] is not None]
    for wanted in (CUDA, OTHER, ROCM):
        if wanted in configs:
            return wanted
    return BOTH


@functools.lru_cache(maxsize=1024)
def _last_part(target: str) -> str:
    return PurePosixPath(target).name.lower()


def subdir_config(target: str, config: str) -> str:
    if config != BOTH:
        return config
    name = _last_part(target)
    if re.search(r"(?:^|[-_])(?:hip|rocm)$", name):
        return ROCM
    if re.search(r"(?:^|[-_])cuda$", name):
        return CUDA
    if re.search(r"(?:^|[-_])(?:sycl|metal|vulkan|opencl|musa|cann|kompute|blas|cpu)$", name):
        return OTHER
    return BOTH
