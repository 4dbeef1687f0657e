import subprocess
def attention(q, cfg):
    if cfg.attention_backend == 'cuda_jit':
        subprocess.run(['nvidia-smi', '-L'])
        return q
    return q * 2

def set_fuser(name):
    if name == 'nvfuser':
        subprocess.run(['nvidia-smi', '-q'])
