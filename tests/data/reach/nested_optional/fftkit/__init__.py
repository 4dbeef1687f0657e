from fftkit.conv import FFTConv

__all__ = ["FFTConv"]
