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
    """One line of the tool's own messages that may quote the tree: auditor.util.escape.log_line (kept under this
    name for the callers that import it from here)."""
    from auditor.util.escape import log_line

    return log_line(text)
