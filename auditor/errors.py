"""The tool's own failure: a problem with its input or environment, never with the scanned code."""


class ToolError(Exception):
    """A problem with the tool's input or environment (not with the scanned code): exit 2."""


def safe_text(text: str) -> str:
    """One line of the tool's own messages that may quote the tree: auditor.escape.log_line (kept under this
    name for the callers that import it from here)."""
    from auditor.escape import log_line

    return log_line(text)
