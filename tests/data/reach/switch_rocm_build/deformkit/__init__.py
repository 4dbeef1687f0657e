from deformkit import _C


def deform_sample(value, offsets):
    return _C.deform_forward(value, offsets)
