"""A team's own rule pack: `rocm-audit rules --check DIR` validates its rule files and runs every rule's own
examples (flag examples must be reported on the lines they mark, ok examples not at all); `--rules DIR` adds it
to the shipped rules for a scan."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor.match.inputs.kinds import classify
from auditor.run.runner.isolate import fork_available, over_budget, scan_in_children
from auditor.match.rulebook import Example, Rulebook, load_pack, load_rulebook
from auditor.match.rulebook.schema import RuleError
from auditor.run.runner.workers import DEFAULT_TIME_BUDGET, with_budget
from auditor.run.scan.file import scan_text_as
from auditor.types import FileResult, Rule, SourceFile


@dataclass(frozen=True, slots=True)
class PackCheck:
    rules: tuple[Rule, ...]
    examples: int
    problems: tuple[str, ...]      # one line each, naming the rule file, the rule and the example


def example_problem(rulebook: Rulebook, rule: Rule, example: Example, flag: bool) -> str | None:
    """What is wrong with one example of a rule (None: nothing), scanned here without a budget (the shipped
    rules' examples; a pack's run under one, check_pack)."""
    result = example_result(rulebook, example)
    if result is None:
        return f"example file {example.file!r} is not a file kind rocm-audit reads"
    return judged(result, rule, example, flag)


def example_result(rulebook: Rulebook, example: Example) -> FileResult | None:
    """An example's file scanned as the rule check scans it, with the cross-file findings of its tree (None: not
    a file kind rocm-audit reads)."""
    kind = classify(example.file)
    if not kind:
        return None
    result = scan_text_as(example.file, kind, example.code, rulebook)
    return _with_tree(result, example, rulebook) if example.tree else result


def _with_tree(result: FileResult, example: Example, rulebook: Rulebook) -> FileResult:
    """The example's file with the findings a cross-file analysis (auditor/match/xlang) makes of it and the other
    files of its tree, scanned beside it."""
    from dataclasses import replace

    from auditor.match.xlang.importchain import link_imports
    from auditor.match.xlang.link import link_ops
    from auditor.match.xlang.ownextension import link_own_extensions
    from auditor.model.rocmpath.pybuild import read_python_build_text
    from auditor.model.rocmpath.rocmevidence import cuda_only_artifacts

    files = dict(example.tree)
    files[example.file] = example.code
    others = [scan_text_as(path, kind, code, rulebook) for path, code in example.tree
              if (kind := classify(path)) and path != example.file]
    results = [result, *others]
    found = [f for r in results for f in r.findings]
    builds = [b for path, code in files.items() if path.endswith("setup.py")
              and (b := read_python_build_text(path, code, rulebook.own_context.guards.python)) is not None]
    linked = [f for f in [*link_ops(results, found, rulebook, files.get),
                          *link_imports(results, found, rulebook, files.get),
                          *link_own_extensions(results, rulebook, files.get, {"cuda": cuda_only_artifacts(builds)})]
              if f.path == example.file]
    return replace(result, findings=(*result.findings, *linked))


def judged(result: FileResult, rule: Rule, example: Example, flag: bool) -> str | None:
    """What is wrong with one example of a rule, scanned (None: nothing): not reported, reported on other lines,
    or, for an ok example, reported at all (a guarded hit is fine there)."""
    if result.error is not None:
        return f"{example.file}: {result.error}"
    hits = [f for f in result.findings if f.rule_id == rule.id and not f.guarded]
    lines = sorted({f.span.line for f in hits if f.span.line is not None})
    if not flag:
        return f"{example.file}: ok example reported on line(s) {lines}" if hits else None
    if not hits:
        others = sorted({f.rule_id for f in result.findings if f.span.line in example.lines} - {rule.id})
        won = f" (reported there by {', '.join(others)} instead)" if others else ""
        return f"{example.file}: flag example not reported{won}"
    missing = [line for line in example.lines if line not in lines]
    if missing:
        return f"{example.file}: flag example marks line(s) {list(example.lines)}, reported on {lines}"
    if not example.lines:
        return f"{example.file}: flag example marks no line (end it with # flag, // flag, or give line = N)"
    return None


def check_pack(directory: Path, packs: Sequence[Path] = (), budget: float = DEFAULT_TIME_BUDGET) -> PackCheck:
    """Raises RuleError when the pack does not load (a malformed file, an id the shipped rules or `packs` use), or
    when an example's scan overruns `budget` seconds (a pattern that backtracks): examples are scanned as a scan's
    files are, each under the per-file budget in a child process that is ended if it hangs in a regex."""
    own = load_pack(directory, check_queries=True)
    rulebook = load_rulebook(packs=(*packs, directory))
    by_id = rulebook.by_id()
    items = [(rule, label, flag, i, example)
             for rule in sorted(own, key=lambda r: r.id)
             for label, flag, examples in (("flag", True, rule.flag), ("ok", False, rule.ok))
             for i, example in enumerate(examples, start=1)]
    problems: list[str] = []
    kinds = [classify(item[4].file) for item in items]
    runnable = {str(n): (item[4], kind) for n, (item, kind) in enumerate(zip(items, kinds)) if kind}
    results = _scan_examples(runnable, rulebook, budget)
    timed_out = over_budget(SourceFile("", "", ""), budget).error
    for n, (rule, label, flag, i, example) in enumerate(items):
        where = f"{rule.source_file}: {rule.id} {label} example {i}"
        result = results.get(str(n))
        if result is None:
            problems.append(f"{where}: example file {example.file!r} is not a file kind rocm-audit reads")
            continue
        if result.error == timed_out:
            raise RuleError(f"{where}: scanning it took over the {budget:g} s per-file time budget "
                            "(a pattern that backtracks?)")
        if example.tree:
            result = _with_tree(result, example, rulebook)
        problem = judged(result, by_id[rule.id], example, flag)
        if problem:
            problems.append(f"{where}: {problem}")
    return PackCheck(tuple(own), len(items), tuple(problems))


def _scan_examples(runnable: dict[str, tuple[Example, str]], rulebook: Rulebook,
                   budget: float) -> dict[str, FileResult]:
    """Each example scanned under the per-file budget, in forked children where possible (run/runner/isolate.py),
    keyed as given. The result carries the example's own file name."""
    sources = [SourceFile(key, "", kind) for key, (_, kind) in runnable.items()]

    def scan_one(source: SourceFile) -> FileResult:
        example, kind = runnable[source.path]
        return with_budget(source, budget, lambda: scan_text_as(example.file, kind, example.code, rulebook))

    if budget > 0 and sources and fork_available():
        done = scan_in_children(sources, scan_one, budget)
    else:
        done = [scan_one(source) for source in sources]
    return {source.path: result for source, result in zip(sources, done)}


def check_command(settings) -> int:
    """`rules --check DIR`: 0 when every rule of the pack loads and its examples hold, 1 when an example fails;
    a rule file that does not load is a ToolError (exit 2)."""
    from auditor.util.errors import ToolError, safe_text
    from auditor.match.rulebook.schema import RuleError

    try:
        result = check_pack(settings.check_pack, settings.rules.rule_packs, settings.time_budget)
    except RuleError as err:
        raise ToolError(f"rule pack: {err}") from None
    for problem in result.problems:
        print(safe_text(problem))
    print(f"{settings.check_pack}: {len(result.rules)} rules, {result.examples} examples, "
          f"{len(result.problems)} failing")
    return 1 if result.problems else 0
