import pynvml


def test_train():
    pynvml.nvmlInit()
