import pynvml

print(pynvml.nvmlDeviceGetCount())
