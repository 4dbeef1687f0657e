"""The Python engine: parse (auditor/parse/python.py) -> guards (guards.py) -> match (engine.py) -> findings."""
from auditor.match.engines.python.engine import EMBEDDED_CUDA_CALLS, EmbeddedCuda, PythonScan, scan_python
from auditor.match.engines.python.guards import string_value

__all__ = ["EMBEDDED_CUDA_CALLS", "EmbeddedCuda", "PythonScan", "scan_python", "string_value"]
