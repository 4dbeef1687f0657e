import torch
_CACHE = {}

def best_tile(n):
    key = (n, torch.cuda.get_device_capability())
    return _CACHE.setdefault(key, 64)

def use_bf16():
    major, _ = torch.cuda.get_device_capability()
    return major >= 8

def too_old():
    major, _ = torch.cuda.get_device_capability()
    return major < 7

def ampere_kernels():
    return torch.cuda.get_device_capability() == (8, 0)
