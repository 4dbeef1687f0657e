"""Messages name the site: a finding's message leads with what matched (the macro, package, API or flag) and
never names an identifier the scanned code does not hold (another project's switches, the other packages a
rule covers); a rule's docs send the reader only to files that exist."""
import re
from pathlib import Path

import pytest

from auditor.match.engines import is_a_name
from auditor.match.inputs.kinds import classify
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

REPO = Path(__file__).resolve().parent.parent
RULEBOOK = load_rulebook()
# what reads as a project's identifier in a sentence: MACRO_NAMES and snake_case_names
IDENTIFIER = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|[a-z][a-z0-9]*_[a-z0-9_]+)\b")
FLAGGED = [pytest.param(rule, example, id=f"{rule.id}-{i}") for rule in RULEBOOK.rules
           for i, example in enumerate(rule.flag)]


def _findings(rule, example):
    result = scan_text_as(example.file, classify(example.file), example.code, RULEBOOK)
    return [f for f in result.findings if f.rule_id == rule.id]


@pytest.mark.parametrize(("rule", "example"), FLAGGED)
def test_flag_example_messages_name_only_what_the_code_holds(rule, example):
    scanned = "\n".join([example.code, *(code for _, code in example.tree), rule.rocm_alternative or ""])
    for finding in _findings(rule, example):
        message = f"{finding.message} {finding.detail}"
        held = f"{scanned}\n{finding.subject}"           # the subject: what matched, normalised
        foreign = {name for name in IDENTIFIER.findall(message) if name not in held}
        assert not foreign, f"{rule.id} line {finding.span.line}: {message!r} names {sorted(foreign)}"
        subject = " ".join(finding.subject.split())
        if is_a_name(subject):          # a name, not a whole line: the message leads with it
            assert subject in message, (rule.id, subject, message)


def test_a_build_switch_message_names_the_switch_the_code_tests():
    rule = RULEBOOK.by_id()["RA846"]
    found = [f for example in rule.flag for f in _findings(rule, example)]
    assert found and all(f.message.startswith(f"`{f.subject}`: ") for f in found)
    assert not any("GBLIB" in f.message for f in found if "GBLIB" not in f.subject)


DOC_REFERENCE = re.compile(r"\bsee\s+`?([\w./-]+\.(?:yaml|yml|toml|json|md|tsv|txt|py))\b", re.IGNORECASE)


@pytest.mark.parametrize("rule", RULEBOOK.rules, ids=lambda rule: rule.id)
def test_rule_docs_refer_only_to_files_that_exist(rule):
    for name in DOC_REFERENCE.findall(rule.docs or ""):
        assert any((base / name).exists() for base in (REPO, REPO / "rules", REPO / "docs")), (rule.id, name)
