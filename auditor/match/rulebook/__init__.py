"""Load, validate and index the rule files under `rules/` (shipped as `auditor.rules`)."""
from __future__ import annotations

import fnmatch
import hashlib
import importlib.resources
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from auditor.match.hipify.apitable import ApiTable, shipped_table
from auditor.match.rulebook.context import Memo
from auditor.match.rulebook.traits import TRAITS
from auditor.types import CATEGORIES, EFFORT_CLASSES, Rule, Severity

from auditor.match.rulebook.schema import (  # noqa: F401  (re-exported: the rule format's names)
    HIPIFY_STATUSES, PYTHON_CONTEXTS, TEXT_KINDS, CudaMatch, DependencyMatch, Match, PythonMatch, RuleError,
    TextMatch, as_dict, parse_match, validate_guards,
)
from auditor.match.rulebook.defs import expand, read_defs

COMMON_FIELDS = {
    "id", "name", "category", "severity", "message", "rocm_alternative", "effort", "docs", "flag", "ok", "traits",
}
DEFAULT_EXAMPLE_FILE = {
    "dependency": "example.py",
    "python": "example.py",
    "cuda": "example.cu",
    "build": "CMakeLists.txt",
    "container": "Dockerfile",
    "ci": ".github/workflows/ci.yml",
    "shell": "run.sh",
    "extension": "example.py",
    "importchain": "example.py",
    "ownextension": "example.py",
    "k8s": "deploy/worker.yaml",
    "bazel": "BUILD.bazel",
    "conda": "recipe/meta.yaml",
    "cython": "ops.pyx",
}
ID_PATTERN = re.compile(r"^RA\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")

if TYPE_CHECKING:
    from auditor.match.rulebook.context import ScanContext


@dataclass(frozen=True, slots=True)
class Example:
    file: str
    code: str
    line: int | None = None     # the line the finding must be reported on (1-based), when pinned
    more_lines: tuple[int, ...] = ()   # further marked lines that must be reported too
    tree: tuple[tuple[str, str], ...] = ()   # other files scanned with it, (path, code): a cross-file rule's

    @property
    def lines(self) -> tuple[int, ...]:
        return () if self.line is None else (self.line, *self.more_lines)


def rules_root() -> Path:
    return Path(str(importlib.resources.files("auditor.rules")))


# A flag example marks the line its finding is reported on with a trailing `# flag` or `// flag` comment (the
# marker is removed before the example is scanned), or with `line = N`; a one-line example needs neither.
FLAG_MARKER = re.compile(r"[ \t]*(?:#|//)[ \t]*flag[ \t]*$", re.MULTILINE)


def _example(item: object, default_file: str, where: str, flag: bool = False) -> Example:
    if isinstance(item, str):
        item = {"code": item}
    if not (isinstance(item, dict) and "code" in item and set(item) <= {"file", "code", "line", "tree"}):
        raise RuleError(f"{where}: an example is a string or {{code = ..., file = ..., line = N, tree = {{...}}}}, "
                        f"got {item!r}")
    tree = item.get("tree", {})
    if not (isinstance(tree, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in tree.items())):
        raise RuleError(f"{where}: an example's tree is a table of file path = code")
    line = item.get("line")
    if line is not None and (not isinstance(line, int) or isinstance(line, bool) or line < 1):
        raise RuleError(f"{where}: an example's line is a 1-based line number, got {line!r}")
    code = str(item["code"])
    marked = [code.count("\n", 0, m.start()) + 1 for m in FLAG_MARKER.finditer(code)]
    if marked and not flag:
        raise RuleError(f"{where}: only a flag example marks a line (`# flag`), not an ok example")
    if marked and line is not None:
        raise RuleError(f"{where}: a flag example marks its line with `# flag` / `// flag` or line = N, not both")
    if marked:
        code, line = FLAG_MARKER.sub("", code), marked[0]
    if flag and line is None and len(code.strip("\n").splitlines()) == 1:
        line = code[:len(code) - len(code.lstrip("\n"))].count("\n") + 1
    return Example(str(item.get("file", default_file)), code, line, tuple(marked[1:]), tuple(sorted(tree.items())))


def _check_query(match: Match, where: str) -> None:
    if isinstance(match, CudaMatch) and match.query is not None:   # 10-400 ms each: the test suite checks them
        from auditor.parse.cuda import compile_query

        try:
            compile_query(match.query)
        except (ValueError, TypeError) as err:  # tree_sitter.QueryError is a ValueError; TypeError: not text
            raise RuleError(f"{where}: query does not compile: {err}") from None


def parse_rule(raw: dict, source_file: str, check_queries: bool = True) -> Rule:
    where = f"{source_file}: rule {raw.get('id', '?')}"
    missing = {"id", "name", "category", "severity", "message", "effort", "docs", "flag", "ok"} - set(raw)
    if missing:
        raise RuleError(f"{where}: missing field(s) {sorted(missing)}")
    if not ID_PATTERN.match(raw["id"]):
        raise RuleError(f"{where}: id must be RA followed by three digits")
    if not NAME_PATTERN.match(raw["name"]):
        raise RuleError(f"{where}: name must be a kebab-case slug")
    if raw["category"] not in CATEGORIES:
        raise RuleError(f"{where}: unknown category {raw['category']!r}")
    if raw["effort"] not in EFFORT_CLASSES:
        raise RuleError(f"{where}: effort must be one of {EFFORT_CLASSES}")
    try:
        severity = Severity.parse(raw["severity"])
    except ValueError as err:
        raise RuleError(f"{where}: {err}") from None
    traits = raw.get("traits", [])
    if not (isinstance(traits, list) and all(isinstance(t, str) and t in TRAITS for t in traits)):
        raise RuleError(f"{where}: traits is a list of {sorted(TRAITS)}, got {traits!r}")
    match = parse_match({k: v for k, v in raw.items() if k not in COMMON_FIELDS}, where, check_queries)
    if check_queries:
        _check_query(match, where)
    example_kind = match.files[0] if isinstance(match, TextMatch) else match.family
    default_file = DEFAULT_EXAMPLE_FILE[example_kind]
    flag = tuple(_example(item, default_file, where, flag=True) for item in raw["flag"])
    ok = tuple(_example(item, default_file, where) for item in raw["ok"])
    if not flag or not ok:
        raise RuleError(f"{where}: needs at least one flag and one ok example")
    return Rule(
        id=raw["id"],
        name=raw["name"],
        category=raw["category"],
        severity=severity,
        message=raw["message"].strip(),
        rocm_alternative=(raw.get("rocm_alternative") or None),
        effort=raw["effort"],
        docs=raw["docs"].strip(),
        spec=match,
        flag=flag,
        ok=ok,
        example_kind=example_kind,
        source_file=source_file,
        traits=frozenset(traits),
    )


@dataclass(frozen=True)
class Rulebook:
    rules: tuple[Rule, ...]
    digest: str = ""
    guards: dict = field(default_factory=dict)
    api_table: ApiTable | None = None     # None: the HIPIFY API table shipped in rules/hipify/
    # every rule of the full rulebook, before --select/--ignore: (id or name, id). A suppression comment naming
    # one of them is never "unknown", whatever this run selected.
    every_rule: tuple[tuple[str, str], ...] = ()
    # values made from the rules' own text (tree-sitter query groups compiled in this process): carried by the
    # selections and API-table variants made from this rulebook, so every run of the process shares them
    compiled: Memo = field(default_factory=Memo, compare=False, repr=False)

    def suppression_ids(self) -> dict[str, str]:
        """What a suppression comment may name, upper-cased, to the rule id: every rule's id and name."""
        pairs = self.every_rule or tuple(p for r in self.rules for p in ((r.id, r.id), (r.name, r.id)))
        return {spelling.upper(): rule_id for spelling, rule_id in pairs}

    @property
    def table(self) -> ApiTable:
        return self.api_table if self.api_table is not None else shipped_table()

    def with_api_table(self, table: ApiTable) -> "Rulebook":
        """This rulebook, counting and reporting with another API table (an installed hipify-perl's)."""
        return replace(self, digest=f"{_digest(self.rules, self.guards)}:{table.digest}", api_table=table)

    def _with_table(self, digest: str) -> str:
        return digest if self.api_table is None else f"{digest}:{self.api_table.digest}"

    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}

    def family(self, name: str) -> tuple[Rule, ...]:
        return self._families.get(name, ())

    @cached_property
    def own_context(self) -> "ScanContext":
        """These rules with their own guards and no project facts (a rule example, a test, a single file)."""
        from auditor.match.rulebook.context import Guards, ScanContext

        return ScanContext(self, Guards.of(self.guards))

    @cached_property
    def _families(self) -> dict[str, tuple[Rule, ...]]:
        grouped: dict[str, list[Rule]] = {}
        for rule in self.rules:
            grouped.setdefault(rule.matcher, []).append(rule)
        return {k: tuple(v) for k, v in grouped.items()}

    def select(self, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> "Rulebook":
        def chosen(rule: Rule) -> bool:
            picked = not select or any(id_matches(rule, s) for s in select)
            return picked and not any(id_matches(rule, s) for s in ignore)

        kept = tuple(rule for rule in self.rules if chosen(rule))
        every = self.every_rule or tuple(p for r in self.rules for p in ((r.id, r.id), (r.name, r.id)))
        return replace(self, rules=kept, digest=self._with_table(_digest(kept, self.guards)), every_rule=every)


def id_matches(rule: Rule, pattern: str) -> bool:
    pattern = pattern.strip()
    return rule.id.startswith(pattern.upper()) or rule.name == pattern or fnmatch.fnmatch(rule.id, pattern)


def _digest(rules: Iterable[Rule], guards: dict) -> str:
    h = hashlib.blake2b(digest_size=12)
    for rule in rules:
        h.update(repr((rule.id, rule.severity, rule.category, sorted(rule.traits),
                       sorted(as_dict(rule.spec).items()))).encode())
    h.update(repr(sorted(guards.items())).encode())
    return h.hexdigest()


def _rule_files(root: Path) -> list[Path]:
    """Every rule file; `fixes/` holds the fixes' data (auditor/fix/data.py), which is not rules."""
    return sorted(p for p in root.rglob("*.toml")
                  if p.name not in {"guards.toml", "effort.toml"} and p.relative_to(root).parts[0] != "fixes")


# The id range of each family of rule files (the folder a rule file is in): RA1xx python packages, RA5xx/RA9xx
# Python runtime and hazards, RA2xx-RA4xx and RA8xx CUDA sources, RA6xx builds, RA7xx containers and CI.
FAMILY_RANGES = {"python": "159", "cuda": "2348", "build": "6", "container": "7"}


def read_rule_file(path: Path, label: str, check_queries: bool = False) -> list[Rule]:
    """The rules of one rule file; `label` names it in errors and in Rule.source_file."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise RuleError(f"{label}: {err}") from None
    unknown = set(data) - {"rule", "defs"}
    if unknown:
        raise RuleError(f"{label}: unknown top-level key(s) {sorted(unknown)}")
    defs = read_defs(data.get("defs", {}), label)
    rules = [parse_rule(expand(raw, defs, f"{label}: rule {raw.get('id', '?')}") if isinstance(raw, dict) else raw,
                        label, check_queries) for raw in data.get("rule", [])]
    family = PurePosixPath(label).parts[-2] if len(PurePosixPath(label).parts) > 1 else ""
    allowed = FAMILY_RANGES.get(family)
    for rule in rules:
        if allowed and rule.id[2] not in allowed:
            ranges = ", ".join(f"RA{d}xx" for d in allowed)
            raise RuleError(f"{label}: rule {rule.id}: a {family} rule's id is in {ranges}")
    return rules


def load_pack(directory: Path, check_queries: bool = False) -> list[Rule]:
    """A team's own rule pack: every *.toml under the directory, in the shipped format."""
    if not directory.is_dir():
        raise RuleError(f"{directory}: a rule pack is a directory of rule files (*.toml)")
    rules: list[Rule] = []
    for path in sorted(directory.rglob("*.toml")):
        relative = path.relative_to(directory).as_posix()
        rules.extend(read_rule_file(path, f"{directory.name}/{relative}", check_queries))
    if not rules:
        raise RuleError(f"{directory}: no rules in this rule pack")
    return rules


def load_rulebook(root: Path | None = None, check_queries: bool = False, packs: Sequence[Path] = ()) -> Rulebook:
    """Queries are compiled when first used (and checked here with `check_queries`, as the tests do). `packs`:
    rule pack directories whose rules join the shipped ones (ids must not collide)."""
    if root is None and not check_queries and not packs:
        return shipped_rulebook()
    return _read_rulebook(root or rules_root(), check_queries, packs)


@cache
def shipped_rulebook() -> Rulebook:
    """The shipped rules, read once per process: every run of a process that reads many trees (`fix`, `history`)
    shares them, and the query groups compiled for them."""
    return _read_rulebook(rules_root(), False, ())


def _read_rulebook(root: Path, check_queries: bool, packs: Sequence[Path]) -> Rulebook:
    rules: list[Rule] = []
    for path in _rule_files(root):
        rules.extend(read_rule_file(path, path.relative_to(root).as_posix(), check_queries))
    for pack in packs:
        rules.extend(load_pack(pack, check_queries))
    _check_unique(rules)
    _check_claims(rules)
    guards = tomllib.loads((root / "guards.toml").read_text(encoding="utf-8"))
    validate_guards(guards, "guards.toml")
    ordered = tuple(sorted(rules, key=lambda r: r.id))
    return Rulebook(ordered, _digest(ordered, guards), guards)


def _check_unique(rules: list[Rule]) -> None:
    seen_ids: dict[str, str] = {}
    seen_names: dict[str, str] = {}
    for rule in rules:
        for key, seen in ((rule.id, seen_ids), (rule.name, seen_names)):
            if key in seen:
                raise RuleError(f"{rule.source_file}: duplicate {key!r} (also in {seen[key]})")
            seen[key] = rule.source_file


def _check_claims(rules: list[Rule]) -> None:
    """Two rules claiming the same import or the same distribution name (under the same narrowing) would both
    report one line, or one would silently lose: refused unless one declares that it `overrides` the other."""
    from packaging.utils import canonicalize_name

    claimed: dict[tuple, Rule] = {}
    for rule in rules:
        if rule.matcher != "dependency":
            continue
        m = rule.dependency
        keys: set[tuple] = {("import", name) for name in m.imports}
        keys |= {("pypi", canonicalize_name(name), m.extras, m.versions, m.declared_in)
                 for name in m.pypi if "*" not in name}
        for key in sorted(keys):
            other = claimed.setdefault(key, rule)
            if other is rule or rule.id in other.dependency.overrides or other.id in m.overrides:
                continue
            kind = "import" if key[0] == "import" else "distribution"
            raise RuleError(f"{rule.source_file}: rule {rule.id} claims the {kind} {key[1]!r}, which rule {other.id} "
                            f"({other.source_file}) claims too; remove one, or declare `overrides = [\"{other.id}\"]`")
