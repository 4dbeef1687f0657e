import sys

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

DISABLE_GPU_EXTENSION = False
kept_args = []
for arg in sys.argv:
    if arg == "--disable-gpu-ext":
        DISABLE_GPU_EXTENSION = True
        continue
    kept_args.append(arg)
sys.argv = kept_args

ext_modules = []
cmdclass = {}
if not DISABLE_GPU_EXTENSION:
    cmdclass["build_ext"] = BuildExtension
    if torch.utils.cpp_extension.CUDA_HOME is None:
        raise RuntimeError("nvcc was not found")
    ext_modules.append(CUDAExtension(name="normkit_fused_norm", sources=["csrc/norm.cu"]))

setup(name="normkit", packages=find_packages(), ext_modules=ext_modules, cmdclass=cmdclass)
