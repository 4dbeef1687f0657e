"""The requirements of a conda recipe (meta.yaml, recipe.yaml), read line by line: recipes are Jinja
templates (`{{ compiler('cuda') }}`, `{% if %}`) and carry `# [selector]` comments, so they are not YAML."""
from __future__ import annotations

import re

from auditor.parse.declared import Declared

SECTION = re.compile(r"^(\s*)(build|host|run|run_constrained|run_exports|requirements|requires)\s*:\s*$")
ITEM = re.compile(r"^\s*-\s+(.*)$")
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")
SELECTOR = re.compile(r"#\s*\[(.*)\]\s*$")
# a conda-forge build variant that only exists when CUDA is on: the recipe builds without it too
CUDA_VARIANT = re.compile(r"cuda\w*\s*!=\s*[\"']?None|\bcuda\b(?!\w*\s*==\s*[\"']?None)", re.IGNORECASE)
NO_CUDA_VARIANT = re.compile(r"cuda\w*\s*==\s*[\"']?None", re.IGNORECASE)
JINJA_IF = re.compile(r"\{%-?\s*(if|elif|else|endif)\b(.*?)-?%\}")


def cuda_variant_lines(text: str) -> frozenset[int]:
    """Lines a recipe renders only for a CUDA build: `# [cuda_compiler_version != "None"]` selectors, and the
    inside of `{% if cuda_compiler_version != "None" %}` blocks (or the `{% else %}` of an `== "None"` test)."""
    lines: set[int] = set()
    stack: list[bool] = []              # per open {% if %}: is the branch we are in a CUDA-only one
    conditions: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for keyword, condition in JINJA_IF.findall(line):
            if keyword == "if":
                stack.append(bool(CUDA_VARIANT.search(condition)))
                conditions.append(condition)
            elif keyword == "elif" and stack:
                stack[-1] = bool(CUDA_VARIANT.search(condition))
            elif keyword == "else" and stack:
                stack[-1] = bool(NO_CUDA_VARIANT.search(conditions[-1]))
            elif keyword == "endif" and stack:
                stack.pop()
                conditions.pop()
        selector = SELECTOR.search(line)
        if any(stack) or (selector and CUDA_VARIANT.search(selector.group(1))):
            lines.add(number)
    return frozenset(lines)


def recipe_requirements(text: str) -> tuple[Declared, ...]:
    variant_only = cuda_variant_lines(text)
    declared: list[Declared] = []
    in_section = False
    section_indent = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if match := SECTION.match(raw):
            in_section, section_indent = True, len(match.group(1))
            continue
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("{%"):
            continue
        indent = len(raw) - len(raw.lstrip())
        if in_section and indent <= section_indent and not raw.lstrip().startswith("-"):
            in_section = False
        item = ITEM.match(raw) if in_section else None
        if item is None:
            continue
        spec = JINJA.sub("", re.sub(r"\s#.*$", "", item.group(1))).strip().strip("\"'")
        name, _, version = spec.partition(" ")
        if not name or not re.match(r"^[A-Za-z0-9][\w.-]*$", name):
            continue
        requirement = name + _conda_version(version.strip())
        declared.append(Declared(requirement, number, number in variant_only, "conda recipe requirements"))
    return tuple(declared)


def _conda_version(version: str) -> str:
    """`11.8.*`, `>=12`, `12.4` as a PEP 440 specifier where they are one; otherwise dropped (the name counts)."""
    version = version.split(" ")[0]
    if re.fullmatch(r"[<>=!~]=?\s*[\w.*]+", version):
        return version
    if re.fullmatch(r"\d[\w.]*(?:\.\*)?", version):
        return f"=={version}"
    return ""
