"""One rule's page, in fixed sections as ruff's rule pages have: what it flags, why it breaks on ROCm (with the
sources it rests on), an example from the rule's own flag and ok examples, the ROCm alternative, whether a fix
exists and how safe it is (from the fix registry, `rules/fixes/`), and the options that act on it.

`rocm-audit rule RAnnn` prints this page and `scripts/build_rule_docs.py` writes it to `docs/rules/`, so the
terminal and the documentation site say the same thing."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from auditor.fix.data import FixSpec
from auditor.match.rulebook import Example
from auditor.types import Rule

SECTIONS = ("What it flags", "Why it breaks on ROCm", "Example", "ROCm alternative", "Fix", "Options")
EXAMPLES_SHOWN = 2   # of each kind; every example is in the rule file and runs in the tests
_URL = re.compile(r"https?://[^\s,)>]+")
_FENCE_BY_SUFFIX = {".py": "python", ".pyx": "cython", ".pxd": "cython", ".cu": "cpp", ".cuh": "cpp", ".h": "cpp",
                    ".hpp": "cpp", ".cpp": "cpp", ".cc": "cpp", ".c": "c", ".toml": "toml", ".yml": "yaml",
                    ".yaml": "yaml", ".sh": "bash", ".cmake": "cmake", ".bzl": "python", ".cfg": "ini",
                    ".ipynb": "json", ".json": "json", ".txt": "text", ".mk": "make"}
_FENCE_BY_NAME = {"CMakeLists.txt": "cmake", "Dockerfile": "dockerfile", "Makefile": "make", "BUILD": "python",
                  "WORKSPACE": "python", "Pipfile": "toml"}


def fix_safety(fix: FixSpec | None) -> str:
    """safe, unsafe or none: what `rocm-audit fix` can do for the rule's findings."""
    return fix.safety if fix else "none"


def _split_docs(docs: str) -> tuple[list[str], list[str], list[str]]:
    """The rule's docs as (why paragraphs, fix paragraphs, source URLs); a paragraph starting `Fix:` is advice."""
    body, _, sources = (docs or "").partition("Sources:")
    why: list[str] = []
    advice: list[str] = []
    for paragraph in (" ".join(p.split()) for p in body.split("\n\n")):
        if paragraph.startswith("Fix:"):
            advice_text = paragraph.removeprefix("Fix:").strip()
            advice.append(advice_text[:1].upper() + advice_text[1:])
        elif paragraph:
            why.append(paragraph)
    return why, advice, _URL.findall(sources)


def _fence(example: Example) -> str:
    path = PurePosixPath(example.file)
    language = _FENCE_BY_NAME.get(path.name) or _FENCE_BY_SUFFIX.get(path.suffix, "")
    if not language and path.name.startswith("requirements"):
        language = "text"
    return language


def _example_block(example: Example, marked: bool) -> list[str]:
    """A flag example's reported lines carry a comment saying so (in the example's own comment syntax)."""
    lines = example.code.strip("\n").splitlines()
    if marked and example.lines:
        comment = "//" if _fence(example) in ("cpp", "c") else "#"
        lines = [f"{line}  {comment} reported here" if number in example.lines else line
                 for number, line in enumerate(lines, 1)]
    return [f"`{example.file}`:", "", f"```{_fence(example)}", *lines, "```", ""]


def _examples(rule: Rule) -> list[str]:
    out = ["Reported:", ""]
    for example in rule.flag[:EXAMPLES_SHOWN]:
        out += _example_block(example, marked=True)
    out += ["Not reported:", ""]
    for example in rule.ok[:EXAMPLES_SHOWN]:
        out += _example_block(example, marked=False)
    more = len(rule.flag) + len(rule.ok) - len(rule.flag[:EXAMPLES_SHOWN]) - len(rule.ok[:EXAMPLES_SHOWN])
    if more:
        out += [f"{more} more example(s) in `rules/{rule.source_file}`, each run by the tests.", ""]
    return out


def _fix_section(rule: Rule, fix: FixSpec | None) -> list[str]:
    if fix is None:
        return ["None: `rocm-audit fix` does not change this rule's findings; they are changed by hand.", ""]
    flag = "applied by `rocm-audit fix`" if fix.safety == "safe" else "applied only with `rocm-audit fix --unsafe`"
    return [f"**{fix.safety.capitalize()}** ({flag}). {fix.summary}", "", f"Why {fix.safety}: {fix.why}", ""]


def _options(rule: Rule) -> list[str]:
    return [(f"- `--select {rule.id}` / `--ignore {rule.id}` (or the rule's name, `{rule.name}`), also as `select` /"
            " `ignore` in `[tool.rocm-audit]`;"),
            f"- `per-file-ignores`, for example `\"tests/*\" = [\"{rule.id}\"]`;",
            f"- `rocm-audit: ignore[{rule.id}]` in a comment on the line or the line above;",
            ("- `--fail-on SEVERITY`: whether its live findings fail the run"
            f" (this rule's findings are `{rule.severity.label}`)."), ""]


def rule_page(rule: Rule, fix: FixSpec | None) -> str:
    """The rule's page as Markdown."""
    why, advice, sources = _split_docs(rule.docs)
    lines = [f"# {rule.id} {rule.name}", "",
             (f"Category `{rule.category}` · severity {rule.severity.label} · effort {rule.effort} ·"
             f" fix: {fix_safety(fix)}"), "",
             "## What it flags", "", rule.message, "",
             "## Why it breaks on ROCm", "", *[line for p in why for line in (p, "")]]
    if sources:
        lines += ["Sources:", "", *[f"- <{url}>" for url in sources], ""]
    lines += ["## Example", "", *_examples(rule), "## ROCm alternative", ""]
    alternative = [p for p in (rule.rocm_alternative, *advice) if p]
    lines += [line for p in alternative for line in (p, "")] or ["No drop-in alternative exists; see above.", ""]
    lines += ["## Fix", "", *_fix_section(rule, fix), "## Options", "", *_options(rule)]
    return "\n".join(lines).rstrip("\n") + "\n"


def index_page(rules: Iterable[Rule], fixes: Mapping[str, FixSpec]) -> str:
    """Every rule, a line each, by category, linking to its page."""
    by_category: dict[str, list[Rule]] = {}
    for rule in sorted(rules, key=lambda r: r.id):
        by_category.setdefault(rule.category, []).append(rule)
    lines = ["# Rules", "", ("Every rule rocm-audit ships, by category. `rocm-audit rule RAnnn` prints the same page"
             " in the terminal; [writing rules](../rules.md) explains the format."), ""]
    for category, members in sorted(by_category.items()):
        lines += [f"## `{category}`", "", "| rule | name | severity | fix |", "|---|---|---|---|"]
        lines += [f"| [{r.id}]({r.id}.md) | {r.name} | {r.severity.label} | {fix_safety(fixes.get(r.id))} |"
                  for r in members]
        lines.append("")
    return "\n".join(lines)
