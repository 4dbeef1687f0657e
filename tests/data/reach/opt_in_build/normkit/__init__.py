from normkit.fused import FusedNorm

__all__ = ["FusedNorm"]
