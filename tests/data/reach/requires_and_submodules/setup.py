import torch
from setuptools import setup
if torch.version.hip:
    install_requires = ['numpy', 'nvidia-ml-py']
else:
    install_requires = ['numpy', 'cupy-cuda12x']
setup(name='gpukit', packages=['gpukit'], install_requires=install_requires,
      entry_points={'console_scripts': ['gpukit = gpukit.cli:main']})
