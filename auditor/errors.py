"""The tool's own failure: a problem with its input or environment, never with the scanned code."""


class ToolError(Exception):
    """A problem with the tool's input or environment (not with the scanned code): exit 2."""
