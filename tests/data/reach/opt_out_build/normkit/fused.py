import importlib

import torch


class FusedNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = importlib.import_module("normkit_fused_norm")

    def forward(self, x):
        return self.kernels.forward(x)
