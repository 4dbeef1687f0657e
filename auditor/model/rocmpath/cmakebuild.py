"""A CMakeLists.txt read in the ROCm configuration: the ROCm backend option on, every other option at its default
(each if() test's configuration and the HIP evidence: auditor/truth/cmake.py). Tracks if/elseif/else,
`enable_language(HIP)`, backend subdirectories, compile definitions and the sources each branch adds (a Makefile:
auditor/model/rocmpath/makebuild.py)."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from auditor.parse.nesting import MAX_NESTING, too_deep
from auditor.truth.cmake import (
    BOTH, CUDA, OTHER, ROCM, builds_for_hip, compiles_cuda, configuration, evidence_rank, hip_language,
    option_switch, rocm_option_name,
)

COMMAND = re.compile(r"^\s*([A-Za-z_]\w*)\s*\((.*)", re.DOTALL)
DEFINE = re.compile(r"(?:-D)?([A-Za-z_]\w*)(?:=\S*)?")
# a source file named in a command: a run of path characters ending in a source suffix. Found run by run (a
# `findall` of one pattern tries every start inside a long run: quadratic on 100 KB of path characters)
PATH_RUN = re.compile(r"[\w./*${}-]+")
SOURCE_SUFFIX = re.compile(r"\.(?:cu|cuh|cpp|cc|c|hip|h|hpp)(?!\w)")
# `./a.cu` is `a.cu`; `../ggml-cuda/*.cu` keeps its `../` (provenance resolves it against the CMakeLists' directory)
LEADING_DOT_SLASH = re.compile(r"^(?:\./)+")



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
    unconditional_macros: set[str] = field(default_factory=set)        # defined outside every if()
    sources: dict[str, set[str]] = field(default_factory=dict)        # source pattern -> configurations
    subdirs: dict[str, str] = field(default_factory=dict)             # add_subdirectory target -> configuration
    cuda_lines: set[int] = field(default_factory=set)
    opt_in_lines: set[int] = field(default_factory=set)
    rocm_option: str = ""                                             # the variable a ROCm user turns on
    partial: str = ""                                                 # why the file was not read to its end

    @property
    def builds_on_rocm(self) -> bool:
        return bool(self.evidence) and not (self.refusals and len(self.refusals) >= len(self.rocm_tests))


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
    build.optional_macros -= reading.by_default
    if reading.unconditional_hip:
        build.rocm_tests.append(1)
    build.evidence.sort(key=lambda e: (evidence_rank(e[1]), e[0]))
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
                stack.append([configuration(args, rocm_vars, shared), False])
            elif word == "elseif" and stack:
                cond = configuration(args, rocm_vars, shared)
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
        self.off_options: set[str] = set()      # option(X "..." OFF) of no ROCm backend: an opt-in
        self.opt_in: list[bool] = []            # per open if(): this arm is an off option's `if(X)`
        self.by_default: set[str] = set()       # macros defined outside every opt-in arm

    def branch(self, word: str, args: str, first: int) -> bool:
        """if/elseif/else/endif: the arms' configurations and the ROCm tests; False for any other command (and
        an elseif/else/endif with no if open). Too deep a nesting marks the build partial."""
        build, stack = self.build, self.stack
        if word == "if":
            if len(stack) >= MAX_NESTING:
                build.partial = too_deep()
                return True
            cond = configuration(args, self.rocm_vars, self.shared)
            stack.append([cond, False])
            # (a backend's option, `if(GGML_CUDA)`, is a configuration, not an opt-in feature)
            self.opt_in.append(cond is None and args.strip().removeprefix("${").removesuffix("}") in self.off_options)
            if cond == ROCM:
                build.rocm_tests.append(first)
                build.rocm_option = build.rocm_option or option_switch(args)
            return True
        if word == "elseif" and stack:
            cond = configuration(args, self.rocm_vars, self.shared)
            if cond == ROCM:
                build.rocm_tests.append(first)
                build.rocm_option = build.rocm_option or option_switch(args)
                if stack[-1][0] is None:
                    for n in range(_arm_start(stack[-1]), first):
                        build.cuda_lines.add(n)
            stack[-1] = [cond, stack[-1][1] or stack[-1][0] == ROCM]
            stack[-1].append(first)
            self.opt_in[-1] = False
            return True
        if word == "else" and stack:
            self.opt_in[-1] = False
            top = stack[-1]
            top[0] = CUDA if top[0] == ROCM else ROCM if top[0] == CUDA else (OTHER if top[0] == OTHER else None)
            return True
        if word == "endif" and stack:
            stack.pop()
            self.opt_in.pop()
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
            if rocm_option_name(name, args):
                if not self.option_seen:   # the first default-OFF HIP option is the backend switch
                    build.rocm_option, self.option_seen = f"-D{name}=ON", True
            elif name and re.search(r'(?:"|\b(?:OFF|FALSE|NO|0))\s*$', args, re.IGNORECASE):   # no default: OFF
                self.off_options.add(name)
        self._hip_evidence(word, args, code, first, config)
        if word in ("add_compile_definitions", "add_definitions", "target_compile_definitions"):
            self._definitions(word, args, config)
        if word == "add_subdirectory":
            target = args.split()[0].strip('"') if args.split() else ""
            build.subdirs[target] = subdir_config(target, config)
        for source in sources_named(code):
            build.sources.setdefault(LEADING_DOT_SLASH.sub("", source), set()).add(config)
        if config in (CUDA, BOTH) \
                and (compiles_cuda(code) or _languages_cuda(code)):
            build.compiles_cu = True

    def _hip_evidence(self, word: str, args: str, code: str, first: int, config: str) -> None:
        """A HIP project() or language, a ROCm arm's HIP setting, a ROCm arm's FATAL_ERROR (a refusal)."""
        build = self.build
        if word == "project":
            build.has_project = True
            if hip_language(args):
                build.evidence.append((first, code.strip()))
                self.unconditional_hip = self.unconditional_hip or config == BOTH
        if builds_for_hip(code) and config in (ROCM, BOTH):
            build.evidence.append((first, code.strip()))
            if word == "enable_language" and config == BOTH:
                self.unconditional_hip = True
        if word == "message" and "FATAL_ERROR" in args and config == ROCM:
            build.refusals.append(first)

    def _definitions(self, word: str, args: str, config: str) -> None:
        """Macros defined for the ROCm build (on a ROCm arm, or everywhere once HIP is on unconditionally) or
        for the CUDA build only; and those defined only in the arm of an option that is off by default
        (`option(X_CUTLASS "..." OFF)`, `if(X_CUTLASS) add_compile_definitions(X_CUTLASS)`), opt-in macros."""
        tokens = args.split()
        for index, token in enumerate(tokens):
            d = DEFINE.fullmatch(token.strip('"'))
            if d and d.group(1) not in ("PRIVATE", "PUBLIC", "INTERFACE") and not token.startswith("$"):
                if not (word == "target_compile_definitions" and index == 0):   # (not the target's name)
                    (self.build.optional_macros if any(self.opt_in) else self.by_default).add(d.group(1))
                if config == ROCM or (config == BOTH and self.unconditional_hip):
                    self.build.rocm_macros.add(d.group(1))
                elif config == CUDA:
                    self.build.cuda_macros.add(d.group(1))
                elif config == BOTH:
                    self.build.unconditional_macros.add(d.group(1))


def _languages_cuda(code: str) -> bool:
    """`LANGUAGES[^)]*CUDA`, one scan (the pattern rescans to the `)` from every `LANGUAGES`)."""
    for piece in code.split(")"):
        at = piece.find("LANGUAGES")
        if at >= 0 and "CUDA" in piece[at + 9:]:
            return True
    return False


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
