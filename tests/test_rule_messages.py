"""Messages name the site: a finding's message leads with what matched (the macro, package, API or flag) and
never names an identifier the scanned code does not hold (another project's switches, the other packages a
rule covers); a rule's docs send the reader only to files that exist."""
import re
from pathlib import Path

import pytest

from auditor.cli.rulepack import example_result
from auditor.match.engines import is_a_name
from auditor.match.rulebook import load_rulebook

REPO = Path(__file__).resolve().parent.parent
RULEBOOK = load_rulebook()
# what reads as a code identifier in a sentence: MACRO_NAMES, snake_case and camelCase names, dotted module names
IDENTIFIER = re.compile(r"(?<![\w.*/-])(_*[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]|_*[a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+[A-Z]\w*"
                        r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w*])")
PLACEHOLDER = re.compile(r"(X{2,}|Y{2,})$|^(e\.g|i\.e)$")   # cudaXX, cuXXX: a pattern's spelling, not a name
ROCM_SIDE = re.compile(r"^(hip|roc|amd)", re.IGNORECASE)    # what the rule maps to: its documented mapping


def _findings(rule, example):
    result = example_result(RULEBOOK, example)
    return [f for f in result.findings if f.rule_id == rule.id]


def _held(rule, example) -> str:
    """What a message may name: the example's tree (its code, its paths and their module names), the rule's
    ROCm alternative; lower-cased, as a library's name is spelled in prose (cuBLAS) and in code (cublas)."""
    paths = [example.file, *(path for path, _ in example.tree)]
    modules = [path.rsplit(".", 1)[0].replace("/", ".") for path in paths]
    return "\n".join([example.code, *(code for _, code in example.tree), *paths, *modules,
                      rule.rocm_alternative or ""]).lower()


# one test per rule, over all its flag examples (a test per example cost more in the test runner than in the scan)
@pytest.mark.parametrize("rule", RULEBOOK.rules, ids=lambda rule: rule.id)
def test_flag_example_messages_name_only_what_the_code_holds(rule):
    for i, example in enumerate(rule.flag):
        findings = _findings(rule, example)
        assert findings, f"{rule.id}: its flag example {i} makes no finding of it"
        held = _held(rule, example)
        for finding in findings:
            message = f"{finding.message} {finding.detail}"
            foreign = {name for name in IDENTIFIER.findall(message)
                       if name.lower() not in f"{held}\n{finding.subject.lower()}"
                       and not PLACEHOLDER.search(name) and not ROCM_SIDE.match(name)}
            assert not foreign, f"{rule.id} example {i} line {finding.span.line}: {message!r} names {sorted(foreign)}"
            subject = " ".join(finding.subject.split())
            if is_a_name(subject):          # a name, not a whole line: the message leads with it
                assert subject in message, (rule.id, i, subject, message)


def test_a_message_naming_another_package_of_its_rule_is_caught():
    rule = RULEBOOK.by_id()["RA127"]
    example = rule.flag[0]
    held = _held(rule, example)
    names = {n for n in IDENTIFIER.findall("RAPIDS (cuDF, cuVS, nvmath, cuda.tile)") if n.lower() not in held}
    assert {"cuVS", "cuda.tile"} <= names


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
