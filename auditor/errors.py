"""The tool's own failure: a problem with its input or environment, never with the scanned code."""


class AuditorError(Exception):
    """The base of every error rocm-audit raises on purpose (tests/test_repo_hygiene.py keeps it so)."""


class ToolError(AuditorError):
    """A problem with the tool's input or environment (not with the scanned code): exit 2, mapped in one place
    (cli._guarded)."""


class ScannedFileError(AuditorError, ValueError):
    """One scanned file cannot be read or parsed: an error row of that file in the report, never an exit code
    of its own."""


def safe_text(text: str) -> str:
    """Text for one line of a terminal: control characters (escape sequences, carriage returns) made visible,
    undecodable bytes of a file name shown as \\xNN."""
    from auditor.escape import visible

    return visible(text)
