r"""Named fragments a rule file writes once (`[defs]`) and its rules use as `${name}`: a mnemonic list, a mask
regex. A string fragment is put in as written; a list fragment is spliced into a list where an item is exactly
`${name}`, and joined with `|` (a regex alternation) inside a string. `${q:name}` puts it in escaped for a
string literal of a tree-sitter query (`\\.` for `\.`), so a regex is written once for `asm` and `query`."""
from __future__ import annotations

import re

from auditor.match.rulebook.schema import RuleError

REFERENCE = re.compile(r"\$\{(q:)?([A-Za-z_][A-Za-z0-9_]*)\}")
NOT_EXPANDED = {"id", "name", "category", "severity", "message", "rocm_alternative", "effort", "docs", "flag", "ok"}
Defs = dict[str, "str | tuple[str, ...]"]


def read_defs(table: object, where: str) -> Defs:
    if not isinstance(table, dict):
        raise RuleError(f"{where}: [defs] is a table of name = string or list of strings")
    defs: Defs = {}
    for name, value in table.items():
        if isinstance(value, str):
            defs[name] = _substitute(value, defs, f"{where}: defs.{name}")
        elif isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
            defs[name] = tuple(_substitute(v, defs, f"{where}: defs.{name}") for v in value)
        else:
            raise RuleError(f"{where}: defs.{name} is a string or a non-empty list of strings")
    return defs


def expand(raw: dict, defs: Defs, where: str) -> dict:
    """The rule's matcher keys with every `${name}` replaced (a fragment may use those defined before it)."""
    out = {}
    for key, value in raw.items():
        if key in NOT_EXPANDED:
            out[key] = value
        elif isinstance(value, str):
            out[key] = _substitute(value, defs, f"{where}: {key}")
        elif isinstance(value, list):
            out[key] = [item for v in value for item in _items(v, defs, f"{where}: {key}")]
        else:
            out[key] = value
    return out


def _items(value: object, defs: Defs, where: str) -> list:
    whole = REFERENCE.fullmatch(value) if isinstance(value, str) else None
    if whole and not whole.group(1) and isinstance(defs.get(whole.group(2)), tuple):
        return list(defs[whole.group(2)])
    return [_substitute(value, defs, where) if isinstance(value, str) else value]


def _substitute(text: str, defs: Defs, where: str) -> str:
    def one(m: re.Match) -> str:
        value = defs.get(m.group(2))
        if value is None:
            raise RuleError(f"{where}: ${{{m.group(2)}}} is not defined in this file's [defs]")
        text = value if isinstance(value, str) else "|".join(value)
        return text.replace("\\", "\\\\").replace('"', '\\"') if m.group(1) else text

    return REFERENCE.sub(one, text)
