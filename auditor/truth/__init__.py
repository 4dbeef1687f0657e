"""Is this true on a ROCm build? One evaluator per language, fed by one data file of ROCm/CUDA switches
(rules/guards.toml, read and checked by `switches.py`): `cpp.py` for preprocessor conditions, `cmake.py` for CMake
`if()` tests, `make.py` for Makefile conditionals, `markers.py` for the build, CI and dispatch markers, `python.py`
for Python tests and values (the ROCm persona, [python] and [persona]). The engines and the build
readers both call these; no other module names a switch (tests/test_truth_switches.py checks it)."""
