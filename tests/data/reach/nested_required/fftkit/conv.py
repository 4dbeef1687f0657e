import torch

from fftkit_kernels import conv_forward


class FFTConv(torch.nn.Module):
    def forward(self, x, k):
        return conv_forward(x, k)
