import torch

try:
    from .. import gpu
except ImportError:   # the CPU kernels serve every other install
    gpu = None
from .. import cpu


def pooled(x):
    if gpu is not None and x.is_cuda:
        return gpu.pool_forward(x)
    return cpu.pool_forward(x)
