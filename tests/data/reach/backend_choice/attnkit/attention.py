import subprocess
def attention(q, cfg):
    if cfg.attention_backend == 'cuda_jit':
        subprocess.run(['nvidia-smi', '-L'])
        return q
    return q * 2

def set_fuser(name):
    if name == 'nvfuser':
        subprocess.run(['nvidia-smi', '-q'])

def set_jit(mode):
    if mode == 'nvf' or mode == 'nvfuser':
        subprocess.run(['nvidia-smi', '-q'])
    elif mode == 'legacy' or mode == 'old':
        subprocess.run(['nvidia-smi', '-L'])
    return mode
