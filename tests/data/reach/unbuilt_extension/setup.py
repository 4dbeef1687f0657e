from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ext_modules = [CppExtension("gridkit.cpu", ["gridkit/lib/cpu/ops.cpp"])]
if CUDA_HOME is not None:
    ext_modules.append(CUDAExtension("gridkit.gpu", ["gridkit/lib/gpu/ops.cu"]))

setup(
    name="gridkit",
    packages=find_packages(exclude=["tests"]),
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
)
