import gpukit.monitor

def main():
    gpukit.monitor.report()
