"""HIPIFY knowledge: the CUDA-to-HIP API table, hipify-perl interop, API references in code, coverage."""
