from actkit.kernels import scale
