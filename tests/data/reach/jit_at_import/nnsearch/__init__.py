import os
import torch
from torch.utils.cpp_extension import load

def _build(name):
    here = os.path.dirname(__file__)
    sources = [os.path.join(here, 'csrc', '{}.cu'.format(name))]
    return load(name=name, sources=sources)

_ext = _build('topk')
IS_ROCM = torch.version.hip is not None
