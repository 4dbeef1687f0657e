import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, ROCM_HOME, CppExtension, CUDAExtension


def get_extensions():
    this_dir = os.path.dirname(os.path.abspath(__file__))
    csrc = os.path.join(this_dir, "deformkit", "csrc")
    main_source = os.path.join(csrc, "vision.cpp")
    sources = [main_source] + glob.glob(os.path.join(csrc, "**", "*.cpp"))
    extension = CppExtension
    define_macros = []
    is_rocm_pytorch = torch.version.hip is not None and ROCM_HOME is not None
    if torch.cuda.is_available() and (CUDA_HOME is not None or is_rocm_pytorch):
        extension = CUDAExtension
        sources += glob.glob(os.path.join(csrc, "**", "*.cu")) + glob.glob(os.path.join(csrc, "*.cu"))
        if not is_rocm_pytorch:
            define_macros += [("WITH_CUDA", None)]
        else:
            define_macros += [("WITH_HIP", None)]
    return [extension("deformkit._C", sources, define_macros=define_macros)]


setup(name="deformkit", packages=find_packages(), ext_modules=get_extensions(),
      cmdclass={"build_ext": torch.utils.cpp_extension.BuildExtension})
