"""Inline suppressions: `rocm-audit: ignore[RA101]` (this line, or the next when the comment is on its own line)
and `rocm-audit: file-ignore[RA101]` (the whole file), read from the file's real comments only: Python's tokens,
C/C++/CUDA comments as the compiler reads them, a `#` comment of the other kinds (`InputKind.comments`). A marker
inside a string literal is text. A bare `ignore` covers every rule of its line; a file-wide suppression must name
its rules (a bare `file-ignore` suppresses nothing and is reported). A rule may be named by its id or its name
(`ignore[pynvml]`), and `# noqa: RA101` (as in ruff) is the same as `ignore[RA101]`.

The scan keeps what each suppression silenced (`FileResult.silenced`); which suppressions a run honours is the
run's `SuppressionPolicy` (docs/suppressions.md)."""
from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from auditor.match.inputs.kinds import CommentSyntax
from auditor.parse.sourcetext import Comment, c_comments, source_lines
from auditor.types import FileResult, Finding

MARKER = re.compile(r"rocm-audit:\s*(file-ignore|ignore)(?:\[([^\]]*)\])?")
NOQA = re.compile(r"(?i)(?:#|//)\s*noqa:\s*([\w-]+(?:[\s,]+[\w-]+)*)")
NOQA_HINT = re.compile(r"(?i)noqa:")
RA_ID = re.compile(r"^RA\d+$")
ALL = "*"
BARE_FILE_IGNORE = "file-ignore"   # in unknown_ids: a file-wide suppression that names no rule (ids are upper case)


@dataclass(frozen=True, slots=True)
class Marker:
    """One suppression: the line of its comment, the line it covers (None: the whole file), the rule ids."""

    line: int
    target: int | None
    ids: frozenset[str]

    def covers(self, rule_id: str, line: int | None) -> bool:
        return (self.target is None or self.target == line) and (ALL in self.ids or rule_id in self.ids)


@dataclass(frozen=True, slots=True)
class Suppressions:
    markers: tuple[Marker, ...] = ()
    unknown_ids: tuple[tuple[int, str], ...] = ()

    def covering(self, rule_id: str, line: int | None) -> Marker | None:
        return next((m for m in self.markers if m.covers(rule_id, line)), None)

    def covers(self, rule_id: str, line: int | None) -> bool:
        return self.covering(rule_id, line) is not None


def read_suppressions(text: str, known: Mapping[str, str] | None = None,
                      comments: CommentSyntax = "hash") -> Suppressions:
    """`text`: as the scan reads it (line ends made LF). `known`: what a comment may name, upper-cased, to the rule
    id (Rulebook.suppression_ids: every rule's id and name, whatever --select/--ignore chose). A name becomes its
    id; an item that names no rule is unknown in a `rocm-audit:` comment, and left to the other tools in a
    `# noqa:` one (`# noqa: E501, RA112`)."""
    if comments == "none" or ("rocm-audit:" not in text and not NOQA_HINT.search(text)):
        return Suppressions()
    markers: list[Marker] = []
    unknown: list[tuple[int, str]] = []
    for comment in _comments(text, comments):
        for offset, kind, ids, strangers in _markers(comment.text, known):
            line = comment.line + comment.text.count("\n", 0, offset)
            unknown.extend((line, i) for i in strangers)
            if kind == "file-ignore":
                if ALL in ids:
                    unknown.append((line, BARE_FILE_IGNORE))
                elif ids:
                    markers.append(Marker(line, None, frozenset(ids)))
                continue
            own_line = comment.own_line or line != comment.line
            markers.append(Marker(line, line + 1 if own_line else line, frozenset(ids)))
    return Suppressions(tuple(markers), tuple(unknown))


def _comments(text: str, syntax: CommentSyntax) -> Iterator[Comment]:
    if syntax == "c":
        yield from c_comments(text)
    elif syntax == "python":
        yield from _python_comments(text)
    else:
        for number, line in enumerate(source_lines(text), start=1):
            at = _hash_comment(line)
            if at is not None:
                yield Comment(number, line[at:], not line[:at].strip())


def _python_comments(text: str) -> Iterator[Comment]:
    """The comment tokens, as far as the tokenizer can read (a suppression past a line it cannot read is not
    honoured: it might be inside a string)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                yield Comment(row, token.string, not token.line[:column].strip())
    except (tokenize.TokenError, SyntaxError):
        return


def _hash_comment(line: str) -> int | None:
    """Where a `#` comment starts on the line, outside single or double quotes; None: no comment."""
    if "#" not in line:
        return None
    quote = None
    for i, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#":
            return i
    return None


def _markers(comment: str, known: Mapping[str, str] | None):
    """(offset in the comment, kind, rule ids, unknown items) of each suppression in the comment's text."""
    for m in MARKER.finditer(comment):
        kind, listed = m.group(1), m.group(2)
        items = [i.strip().upper() for i in listed.split(",") if i.strip()] if listed else []
        if not items:
            yield m.start(), kind, {ALL}, []
            continue
        if known is None:
            yield m.start(), kind, set(items), []
            continue
        yield m.start(), kind, {known[i] for i in items if i in known}, sorted(i for i in items if i not in known)
    for m in NOQA.finditer(comment):   # ruff's and flake8's spelling; only our own rules, a bare `noqa` is theirs
        items = [i.upper() for i in re.split(r"[\s,]+", m.group(1)) if i]
        ids = {known[i] for i in items if i in known} if known is not None else {i for i in items if RA_ID.match(i)}
        if ids:
            yield m.start(), "ignore", ids, []


# --- which suppressions a run honours ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SuppressionPolicy:
    """`inline`: False (--no-inline-suppressions) honours none. `added`: under --diff-base, the lines the change
    adds to each changed file (path from the scanned root -> lines; None: a new file), where a suppression is not
    honoured (unless the base's config allows new ones)."""

    inline: bool = True
    added: tuple[tuple[str, tuple[int, ...] | None], ...] | None = None

    def honours(self, path: str, line: int) -> bool:
        if not self.inline:
            return False
        if self.added is None:
            return True
        lines = dict(self.added).get(path, ())
        return lines is not None and line not in lines

    def at_base(self) -> SuppressionPolicy:
        """The policy for the base revision's files: the change added nothing to them."""
        return replace(self, added=None)


def honoured(result: FileResult, policy: SuppressionPolicy) -> FileResult:
    """The result with the findings of the suppressions the policy does not honour given back."""
    back = [finding for finding, line in result.silenced if not policy.honours(result.path, line)]
    if not back:
        return result
    still = tuple((f, line) for f, line in result.silenced if policy.honours(result.path, line))
    return replace(result, findings=tuple(sorted((*result.findings, *back), key=Finding.sort_key)),
                   suppressed=len(still), silenced=still)


def unknown_suppressions(results) -> tuple[tuple[str, int, str], ...]:
    """(path, line, rule id) of each suppression naming a rule that does not exist, from the scan's facts."""
    found: list[tuple[str, int, str]] = []
    for result in results:
        found.extend((result.path, line, rule_id) for line, rule_id in result.facts.unknown_suppressions)
    return tuple(sorted(found))


def unknown_suppression_message(rule_id: str) -> str:
    if rule_id == BARE_FILE_IGNORE:
        return ("a rocm-audit file-ignore must name the rules it suppresses (`rocm-audit: file-ignore[RA200]`); "
                "this one suppresses nothing")
    return f"unknown rule id {rule_id} in a rocm-audit suppression (rocm-audit rules lists them)"
