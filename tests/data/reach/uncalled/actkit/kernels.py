import triton
import triton.language as tl

@triton.jit
def _ptx_tanh(x):
    return tl.inline_asm_elementwise('tanh.approx.f32 $0, $1;', '=r,r', [x], dtype=tl.float32, is_pure=True, pack=1)

@triton.jit
def _ptx_rcp(x):
    return tl.inline_asm_elementwise('rcp.approx.f32 $0, $1;', '=r,r', [x], dtype=tl.float32, is_pure=True, pack=1)

@triton.jit
def _scale_kernel(x_ptr, n):
    x = tl.load(x_ptr + tl.arange(0, 16))
    tl.store(x_ptr + tl.arange(0, 16), _ptx_rcp(x))

def scale(x):
    _scale_kernel[(1,)](x, x.numel())
