"""Engines for code: Python, notebooks, CUDA and C/C++, Cython."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from auditor.match.engines.dependency import requirement_findings
from auditor.match.engines.text import scan_text
from auditor.match.inputs.engine import EngineResult, Incomplete, ParseFailure, ScanInput
from auditor.parse.manifest import pip_install_commands
from auditor.match.rulebook.context import ScanContext
from auditor.types import PROJECT_MACRO, FileFacts, Finding, Span


@dataclass(frozen=True, slots=True)
class PythonEngine:
    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.match.engines.python import EMBEDDED_CUDA_CALLS, scan_python
        from auditor.match.engines.python.cudasource import CUDA_SOURCE_NEEDLES
        from auditor.match.engines.python.envoptin import opt_in_lines_of
        from auditor.match.engines.python.functions import python_functions
        from auditor.parse.pyimports import import_time_lines, line_runs_of, unguarded_imports
        from auditor.parse.python import PythonParseError, parse
        from auditor.match.rulebook.prefilter import Haystack, python_gate

        path, text, lines = source.path, source.text, source.lines
        note: str | None = None
        try:
            tree = parse(text)  # always: a syntax error is reported even where no rule could match
        except PythonParseError as err:
            from auditor.parse.pyrecover import recover
            from auditor.parse.python import PythonTree

            recovered = recover(text, f"cannot parse: {err}")   # the imports behind a bad line are still seen
            tree = PythonTree(recovered.module)
            note = recovered.note if recovered.whole else Incomplete(recovered.note)
        imports = unguarded_imports(tree.module)
        opt_in = tuple(sorted(opt_in_lines_of(text, tree.module, tree.nodes)))
        functions = python_functions(tree)   # the calls layer of reach (auditor/model/rocmpath/pycalls.py)
        lowered = Haystack(text.lower())
        gate = python_gate(ctx, EMBEDDED_CUDA_CALLS, CUDA_SOURCE_NEEDLES)
        if PurePosixPath(path).name != "setup.py" and not gate.may_match(lowered):
            return EngineResult((), FileFacts(imports=imports, opt_in_lines=opt_in, functions=functions), note)
        scan = scan_python(tree, ctx, path, lines, lowered)
        found = list(scan.findings)
        # a requirement declared on a branch a ROCm install skips (`else: install_requires = [...]`) is guarded
        found.extend(_guard_with(list(requirement_findings(ctx.family("dependency"), scan.declared, path, lines)),
                                 scan.guarded))
        for embedded in dict.fromkeys(scan.embedded):   # a load_inline source is also a CUDA source string
            from auditor.match.engines.cuda import scan_cuda   # tree-sitter only when there is CUDA to parse
            from auditor.parse import cuda as ts_cuda

            sub_tree = ts_cuda.parse(embedded.code.encode())
            hits = scan_cuda(sub_tree, ctx, path, "cuda", lines, line_offset=embedded.first_line - 1)
            found.extend(_guard_with(hits, scan.guarded))
        # where a finding may be the root of an import chain (auditor/match/xlang/importchain.py), from this parse:
        # the file is never parsed again there (None: not parsed cleanly, or nothing found)
        import_time = line_runs_of(import_time_lines(tree.module)) if note is None and found else None
        return EngineResult(tuple(found), FileFacts(cpp_extension=scan.uses_cpp_extension, imports=imports,
                                                    opt_in_lines=opt_in, import_time=import_time,
                                                    functions=functions), note)


def _guard_with(findings: list[Finding], guarded_line) -> list[Finding]:
    from auditor.match.engines import as_guarded

    return [
        as_guarded(f) if not f.guarded and guarded_line(f.span.line) else f
        for f in findings
    ]


@dataclass(frozen=True, slots=True)
class NotebookEngine:
    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.parse.python import PythonParseError, notebook_code

        path = source.path
        try:
            code = notebook_code(source.text)
        except PythonParseError as err:
            raise ParseFailure(f"cannot parse: {err}") from None
        code_lines = code.source.splitlines()
        result = PythonEngine().scan(ScanInput(path, code.source, code_lines, source.abspath), ctx)
        found = list(result.findings)
        command_lines = [""] * len(code_lines)
        for number, command in code.shell_lines:
            command_lines[number - 1] = command
        content = pip_install_commands("\n".join(command_lines))
        found += list(requirement_findings(ctx.family("dependency"), content.declared, path, code_lines))
        out = []
        for f in found:
            line = f.span.line
            if line and 1 <= line <= len(code.cells):
                cell, cell_line = code.cells[line - 1]
                f = replace(f, span=Span(cell_line, f.span.column, cell_line), detail=f"cell {cell}, line {cell_line}")
            out.append(f)
        return replace(result, findings=tuple(out))


@dataclass(frozen=True, slots=True)
class CudaEngine:
    """CUDA and C/C++ (`kind`: which rules' `files` apply). One parse, one inventory: the rules' matches and the
    HIPIFY reference count share them."""

    kind: str = "cuda"

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.match.engines.cuda import scan_cuda
        from auditor.match.engines.hipify import unsupported_findings
        from auditor.parse import cuda as ts_cuda
        from auditor.parse.guardmacros import NOTE as MACRO_NOTE
        from auditor.parse.guardmacros import lines_guarded_by_project_macros
        from auditor.parse.preproc import line_states
        from auditor.match.hipify.references import (
            HAZARD_CATEGORIES, HAZARD_TRAIT, file_coverage, find_references, function_spans,
        )
        from auditor.match.xlang.exports import defined_functions, exports, quoted_includes

        path, text, lines, kind = source.path, source.text, source.lines, self.kind
        tree = ts_cuda.parse(text.encode("utf-8", "replace"))
        inventory = ts_cuda.inventory(tree)
        states = line_states(text, ctx.guards.preprocessor)
        id_texts = ts_cuda.node_texts(inventory.get("id", []))   # read once for the rules and the HIPIFY table
        found = scan_cuda(tree, ctx, path, kind, lines, states=states, inventory=inventory, id_texts=id_texts)
        if by_macro := lines_guarded_by_project_macros(text, ctx.guards.preprocessor, states):
            found = [replace(f, disposition=PROJECT_MACRO, disposition_note=MACRO_NOTE)
                     if f.guarded and f.span.line in by_macro else f for f in found]
        references = find_references(inventory, ctx.table, states.dead, id_texts)
        cuda_rules = ctx.family("cuda")
        hipify_rules = ctx.derived(("hipify-statuses", kind), lambda: tuple(
            r for r in cuda_rules if r.cuda.hipify_status is not None and kind in r.cuda.files))
        found += unsupported_findings(references, hipify_rules, found, states, path, lines, cuda_rules)
        hazard_rules = ctx.derived(("hazard-rules",), lambda: frozenset(
            r.id for r in ctx.rules if r.category in HAZARD_CATEGORIES or HAZARD_TRAIT in r.traits))
        hazards = {f.span.line for f in found if not f.guarded and f.span.line and f.rule_id in hazard_rules}
        coverage = file_coverage(references, hazards, function_spans(inventory))
        functions = defined_functions(inventory.get("function", ()), inventory.get("call", ()), ts_cuda.text)
        registered = exports(text)
        linked = FileFacts(exports=registered, includes=quoted_includes(inventory, ts_cuda.text), functions=functions,
                           fenced_exports=tuple(e[3] for e in registered if e[3] in states.excluded),
                           unread_rules=unread_rules(tree.lost_lines(), lines, ctx.derived(
                               ("cuda-rule-words",), lambda: rule_words(cuda_rules))))
        return EngineResult(tuple(found), linked, tree.lost_text() or None, coverage)


@dataclass(frozen=True, slots=True)
class CythonEngine:
    """The extern declarations through the CUDA engine (as C), the rest of the file through the text rules."""

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.parse.cython import as_c

        as_cpp = CudaEngine("cpp").scan(replace(source, text=as_c(source.text)), ctx)
        found = list(as_cpp.findings) + scan_text(source.text, ctx, source.path, "cython", source.lines)
        # Cython spellings C lacks (`vector[int]`, `cppclass`) leave syntax errors in the rewritten text: the C
        # parse is best effort by design, so it does not mark the file partial
        return EngineResult(tuple(found), coverage=as_cpp.coverage)


@dataclass(frozen=True)
class RuleWords:
    """What of each C/C++ rule can be looked for in text no parse could read: its words (prefilter needles),
    and the PTX regex of the rules that match inline assembly."""

    worded: tuple
    asm: tuple[tuple[str, re.Pattern[str]], ...]


def rule_words(rules: tuple) -> RuleWords:
    from auditor.match.rulebook.prefilter import rule_needles

    return RuleWords(tuple(r for r in rules if rule_needles(r) is not None),
                     tuple((r.id, re.compile(r.cuda.asm)) for r in rules if r.cuda is not None and r.cuda.asm))


def unread_rules(spans: tuple[tuple[int, int], ...], lines: list[str], words: RuleWords) -> tuple[
        tuple[int, int, tuple[str, ...]], ...]:
    """For each stretch of lines no parse could read, the rules whose words (or PTX) occur in it. Under
    --diff-base a change may not add such lines (judge/incomplete.py): code there is hidden from every
    rule."""
    from auditor.match.rulebook.prefilter import Haystack, rules_present

    out = []
    for first, last in spans:
        text = "\n".join(lines[first - 1:last])
        found = tuple(r.id for r in rules_present(words.worded, Haystack(text.lower())))
        found += tuple(rule_id for rule_id, asm in words.asm if rule_id not in found and asm.search(text))
        if found:
            out.append((first, last, found))
    return tuple(out)
