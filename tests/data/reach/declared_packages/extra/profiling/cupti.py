import ctypes

libcupti = ctypes.CDLL("libcupti.so")


def start():
    return libcupti.cuptiActivityEnable(0)
