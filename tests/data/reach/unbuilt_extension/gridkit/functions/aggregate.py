import torch

from gridkit import cpu
if torch.cuda.device_count() > 0:
    from gridkit import gpu


def aggregate(x):
    if x.is_cuda:
        return gpu.aggregate_forward(x)
    return cpu.aggregate_forward(x)
