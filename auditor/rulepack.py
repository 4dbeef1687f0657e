"""A team's own rule pack: `rocm-audit rules --check DIR` validates its rule files and runs every rule's own
examples (flag examples must be reported on the lines they mark, ok examples not at all); `--rules DIR` adds it
to the shipped rules for a scan."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from auditor.discover import classify
from auditor.rulebook import Example, Rulebook, load_pack, load_rulebook
from auditor.scan import scan_text_as
from auditor.types import Rule


@dataclass(frozen=True, slots=True)
class PackCheck:
    rules: tuple[Rule, ...]
    examples: int
    problems: tuple[str, ...]      # one line each, naming the rule file, the rule and the example


def example_problem(rulebook: Rulebook, rule: Rule, example: Example, flag: bool) -> str | None:
    """What is wrong with one example of a rule (None: nothing): not reported, reported on other lines, or, for
    an ok example, reported at all (a guarded hit is fine there)."""
    kind = classify(example.file)
    if not kind:
        return f"example file {example.file!r} is not a file kind rocm-audit reads"
    result = scan_text_as(example.file, kind, example.code, rulebook)
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


def check_pack(directory: Path, packs: Sequence[Path] = ()) -> PackCheck:
    """Raises RuleError when the pack does not load (a malformed file, an id the shipped rules or `packs` use)."""
    own = load_pack(directory, check_queries=True)
    rulebook = load_rulebook(packs=(*packs, directory))
    by_id = rulebook.by_id()
    problems: list[str] = []
    examples = 0
    for rule in sorted(own, key=lambda r: r.id):
        for label, flag, items in (("flag", True, rule.flag), ("ok", False, rule.ok)):
            for i, example in enumerate(items, start=1):
                examples += 1
                problem = example_problem(rulebook, by_id[rule.id], example, flag)
                if problem:
                    problems.append(f"{rule.source_file}: {rule.id} {label} example {i}: {problem}")
    return PackCheck(tuple(own), examples, tuple(problems))


def check_command(settings) -> int:
    """`rules --check DIR`: 0 when every rule of the pack loads and its examples hold, 1 when an example fails;
    a rule file that does not load is a ToolError (exit 2)."""
    from auditor.errors import ToolError, safe_text
    from auditor.rulebook.schema import RuleError

    try:
        result = check_pack(settings.check_pack, settings.rule_packs)
    except RuleError as err:
        raise ToolError(f"rule pack: {err}") from None
    for problem in result.problems:
        print(safe_text(problem))
    print(f"{settings.check_pack}: {len(result.rules)} rules, {result.examples} examples, "
          f"{len(result.problems)} failing")
    return 1 if result.problems else 0
