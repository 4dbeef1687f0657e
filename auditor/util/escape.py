"""Text from the scanned tree (file names, snippets, messages that quote them) made safe for each output.

A file name is chosen by whoever wrote the tree: it may hold newlines, escape sequences, `|`, `[`, `%` or bytes
that are not UTF-8 (kept by Python as lone surrogates). Each format gets it shown, never obeyed.
"""
from __future__ import annotations

import re
import urllib.parse

# C0 and C1 controls and DEL (escape sequences, carriage returns, newlines), bidirectional overrides, and the
# lone surrogates that stand for undecodable bytes of a file name
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

# where a CI runner would read a command: `::` at the start of a line (after blanks, which the runner trims; a
# wrapped line starts after a blank), GitHub's older `##[` and Azure Pipelines' `##vso[` anywhere in a line
_COMMAND_AT_LINE_START = re.compile(r"(?:^|(?<=\s))::")
_LOGGING_COMMAND = re.compile(r"##(?=\[|vso\[)", re.IGNORECASE)


def _shown(match: re.Match) -> str:
    char = match.group(0)
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:          # surrogateescape: the original byte
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def visible(text: str) -> str:
    """Every control character, bidi override and undecodable byte as a visible `\\xNN` / `\\uNNNN`."""
    return _INVISIBLE.sub(_shown, text)


def uri_path(path: str) -> str:
    """A posix path as a URI reference: percent-encoded, `/` kept, undecodable bytes as their own byte."""
    raw = path.encode("utf-8", "surrogateescape")
    return urllib.parse.quote(raw, safe="/-._~!$&'()*+,;=@")


def workflow_data(text: str) -> str:
    """The message of a GitHub workflow command (`::error ...::MESSAGE`), as GitHub's toolkit encodes it."""
    encoded = visible_keep_breaks(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _LOGGING_COMMAND.sub("#\u200b#", encoded)


def workflow_property(text: str) -> str:
    """A property value of a workflow command (`file=`, `title=`): `:` and `,` also encoded."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def visible_keep_breaks(text: str) -> str:
    return "\n".join(visible(line) for line in text.replace("\r\n", "\n").split("\n"))


def log_line(text: str) -> str:
    """Text from the scanned tree (a path, a snippet, a message quoting them) for any line rocm-audit prints, or
    a whole such line: control characters visible (`\\xNN`), and no CI workflow command can start in it (`::`
    where a line could start gets a zero-width space before it, `##[` one inside). Idempotent, so a line built
    from pieces that went through it may go through it again."""
    text = _COMMAND_AT_LINE_START.sub("\u200b::", visible(text))
    return _LOGGING_COMMAND.sub("#\u200b#", text)


def log_lines(text: str) -> str:
    """log_line for each line of a rendered text (a terminal report, a summary), its line breaks kept."""
    return "\n".join(log_line(line) for line in text.split("\n"))
