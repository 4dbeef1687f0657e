"""Every regular expression in the rules runs in linear time on adversarial 1 MB lines."""
import re
import signal

import pytest

from auditor.match.rulebook import load_rulebook

pytestmark = pytest.mark.slow   # every rule regex on adversarial 1 MB lines

RULEBOOK = load_rulebook()
REGEX_KEYS = ("lines", "asm", "unless_asm", "strings", "local_version", "index_url", "declared_in")
MATCH_PREDICATE = re.compile(r'#(?:not-)?match\? @\w+ "((?:[^"\\]|\\.)*)"')
SIZE = 1_000_000
BUDGET_SECONDS = 5.0  # of this process's CPU time (not wall time: a busy machine must not fail it); a linear
# pattern takes under 1 s on 1 MB here, a quadratic one minutes

ADVERSARIAL = {
    "spaces": " " * SIZE,
    "tabs-and-words": "\t x" * (SIZE // 3),
    "dashes": "- " * (SIZE // 2),
    "version-dots": "1." * (SIZE // 2),
    "ptx-words": "cp.async " * (SIZE // 9),
    "dotted-chain": "wgmma." * (SIZE // 6),
    "open-parens": "(" * SIZE,
    "quotes": '"' * SIZE,
    "path": "/a" * (SIZE // 2),
    "identifiers": "cuda_" * (SIZE // 5),
}


def _patterns():
    for rule in RULEBOOK.rules:
        for key in REGEX_KEYS:
            if getattr(rule.spec, key, None) is not None:
                yield pytest.param(getattr(rule.spec, key), id=f"{rule.id}-{key}")
        for i, m in enumerate(MATCH_PREDICATE.finditer(getattr(rule.spec, "query", None) or "")):
            yield pytest.param(m.group(1).encode().decode("unicode_escape"), id=f"{rule.id}-query-{i}")
    for section in RULEBOOK.guards.values():
        for key, value in section.items():
            if isinstance(value, str):
                yield pytest.param(value, id=f"guards-{key}")


class _TooSlow(BaseException):
    pass


def _alarm(signum, frame):
    raise _TooSlow


@pytest.mark.parametrize("pattern", list(_patterns()))
def test_pattern_is_linear_on_adversarial_lines(pattern):
    regex = re.compile(pattern)
    previous = signal.signal(signal.SIGVTALRM, _alarm)
    try:
        for name, text in ADVERSARIAL.items():
            signal.setitimer(signal.ITIMER_VIRTUAL, BUDGET_SECONDS)
            try:
                regex.search(text)
            except _TooSlow:
                pytest.fail(f"over {BUDGET_SECONDS} s on a 1 MB line of {name!r}: {pattern[:120]}")
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    finally:
        signal.signal(signal.SIGVTALRM, previous)
