def _query_nvml():
    import pynvml
    pynvml.nvmlInit()

def main():
    import pycuda.autoinit
    # _query_nvml()

if __name__ == '__main__':
    main()
