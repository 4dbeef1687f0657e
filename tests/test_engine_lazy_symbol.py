"""A driver function called through an underscored pointer (`_cuModuleLoad`) is the function itself, and a file an
engine fails on says why with --debug (the traceback), without hiding other files' results."""
from __future__ import annotations

from auditor.cli.app import main
from tests.conftest import write_tree


def test_underscored_driver_symbol_is_scanned_and_reported(tmp_path, run_json):
    write_tree(tmp_path, {"load.cu": "#include <cuda.h>\nstatic CUresult (*_cuModuleLoad)(CUmodule*, const char*);\n"
                                     "CUresult load(CUmodule* m) {\n  return _cuModuleLoad(m, \"k.cubin\");\n}\n"})
    code, report = run_json("check", tmp_path)
    assert report["summary"]["files_failed"] == 0
    assert any(f["rule"] == "RA821" and f["line"] == 4 for f in report["findings"])


def test_debug_shows_a_files_internal_error_with_its_traceback(tmp_path, capfd, monkeypatch):
    from auditor.match.inputs.code import CudaEngine

    def broken(*args, **kwargs):
        raise TypeError("engine bug for the test")

    monkeypatch.setattr(CudaEngine, "scan", broken)
    write_tree(tmp_path, {"k.cu": "__global__ void k() {}\n", "setup.py": "import torch\n"})
    main(["check", str(tmp_path), "--no-progress", "-j", "1", "--debug"])
    err = capfd.readouterr().err
    assert "internal error scanning k.cu" in err and "Traceback" in err and "engine bug for the test" in err
    main(["check", str(tmp_path), "--no-progress", "-j", "1"])
    assert "Traceback" not in capfd.readouterr().err
