import pynvml

pynvml.nvmlInit()
