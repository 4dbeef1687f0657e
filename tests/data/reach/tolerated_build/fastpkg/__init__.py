import warnings
try:
    from fastpkg import _fused
except ImportError:
    _fused = None
    warnings.warn('fused kernels unavailable, using the PyTorch fallback')
