"""rocm-audit: how much of a CUDA repository breaks on ROCm, and what it costs to port."""

__version__ = "0.1.0"
