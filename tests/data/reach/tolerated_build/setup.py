import warnings
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
ext_modules = []
try:
    ext_modules.append(CUDAExtension('fastpkg._fused', ['csrc/fused.cu']))
except Exception as err:
    warnings.warn(f'fused kernels not built: {err}')
setup(name='fastpkg', packages=['fastpkg'], ext_modules=ext_modules, cmdclass={'build_ext': BuildExtension})
