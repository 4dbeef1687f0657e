"""Every rule's own examples: `flag` must be reported by that rule, `ok` must not be (guarded hits are fine in `ok`)."""
import pytest

from auditor.discover import classify
from auditor.rulebook import load_rulebook
from auditor.scan import scan_text_as

RULEBOOK = load_rulebook()

CASES = [
    pytest.param(rule, example, expect_hit, id=f"{rule.id}-{kind}-{i}")
    for rule in RULEBOOK.rules
    for kind, expect_hit, examples in (("flag", True, rule.flag), ("ok", False, rule.ok))
    for i, example in enumerate(examples)
]


@pytest.mark.parametrize(("rule", "example", "expect_hit"), CASES)
def test_rule_example(rule, example, expect_hit):
    kind = classify(example.file)
    assert kind, f"{rule.id}: example file {example.file!r} is not a file kind rocm-audit reads"
    result = scan_text_as(example.file, kind, example.code, RULEBOOK)
    assert result.error is None, f"{rule.id}: {result.error}"
    hits = [f for f in result.findings if f.rule_id == rule.id and not f.guarded]
    verdict = "Missing" if expect_hit else "Noisy"
    assert bool(hits) is expect_hit, f"{verdict}: {rule.id} on {example.file}:\n{example.code}\n-> {hits}"
    if expect_hit:
        lines = sorted({f.span.line for f in hits if f.span.line is not None})
        missing = [line for line in example.lines if line not in lines]
        assert not missing, f"{rule.id} on {example.file}: expected line(s) {example.lines}, reported {lines}"


@pytest.mark.parametrize("rule", RULEBOOK.rules, ids=lambda rule: rule.id)
def test_every_flag_example_pins_its_line(rule):
    """A `# flag` / `// flag` marker or `line = N` (a one-line example pins itself)."""
    unpinned = [i for i, example in enumerate(rule.flag) if not example.lines]
    assert not unpinned, f"{rule.id}: flag example(s) {unpinned} mark no line"
