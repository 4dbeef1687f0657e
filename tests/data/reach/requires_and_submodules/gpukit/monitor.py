import pynvml

def report():
    pynvml.nvmlInit()
