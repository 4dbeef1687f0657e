# cython: language_level=3
# ruleid: RA445
from cuda.bindings cimport cyruntime

cdef extern from "cuda_runtime_api.h" nogil:
    ctypedef int cudaError_t
    cudaError_t cudaMalloc(void** ptr, size_t size)

# ruleid: RA402
cdef extern from "cublasLt.h" nogil:
    int cublasLtMatmulDescCreate(void** desc, int compute, int scale)

cdef extern from "cuda.h":
    # ruleid: RA820
    int cuCtxCreate(void* ctx, unsigned int flags, int dev) except -1

def allocate(size_t n):
    cdef void* p
    cudaMalloc(&p, n)
    return <size_t>p
