"""The tool's own failure: a problem with its input or environment, never with the scanned code."""


class ToolError(Exception):
    """A problem with the tool's input or environment (not with the scanned code): exit 2."""


def safe_text(text: str) -> str:
    """Text for one line of a terminal: control characters (escape sequences, carriage returns) made visible,
    undecodable bytes of a file name shown as \\xNN."""
    from auditor.escape import visible

    return visible(text)
