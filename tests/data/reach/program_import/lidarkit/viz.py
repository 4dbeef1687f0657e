import tensorrt as trt


def export(engine_path):
    return trt.Runtime(trt.Logger(trt.Logger.WARNING))
