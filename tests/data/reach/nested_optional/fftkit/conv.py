import torch

try:
    from fftkit_kernels import conv_forward
except ImportError:
    conv_forward = None


class FFTConv(torch.nn.Module):
    def forward(self, x, k):
        if conv_forward is None:
            return torch.fft.irfft(torch.fft.rfft(x) * torch.fft.rfft(k))
        return conv_forward(x, k)
