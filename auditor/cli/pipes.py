"""Standard output for `rocm-audit … | head`: a reader that goes away ends nothing but the output."""
from __future__ import annotations

import os


class ClosedPipeQuiet:
    """Standard output that, once the reader has gone (a closed pipe), drops what is written instead of failing:
    the run finishes and exits with its own code, as `ruff … | head` does."""

    def __init__(self, stream) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._reader_gone()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self) -> None:
        self._gone = True
        try:   # what is still buffered goes nowhere, and the interpreter's last flush does not fail either
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)
