"""The cross-language link: a Python call of an extension op whose C++ implementation uses a
CUDA-only library. `exports` reads each C/C++ file's registrations (pybind11 `m.def`, `TORCH_LIBRARY`) during
its one scan; `index` follows each op to the translation units that define it and the headers they include;
`link` reports the Python call sites of the ops that index names, through the real Python engine (so imports,
aliases and ROCm guards are read as for any other rule)."""
