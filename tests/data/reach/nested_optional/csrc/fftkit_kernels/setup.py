from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fftkit_kernels",
    ext_modules=[CUDAExtension("fftkit_kernels", ["conv.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
