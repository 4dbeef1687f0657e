"""Bad input is reported and skipped; the rest of the scan goes on; the exit code does not change."""
import os

from tests.conftest import write_tree

GOOD = {"app/serve.py": "import tensorrt_llm\n"}


def test_bad_files_are_listed_and_good_findings_kept(tmp_path, run_json):
    write_tree(tmp_path, GOOD)
    baseline_code, baseline = run_json(tmp_path)
    write_tree(tmp_path, {
        "bin/kernel.cu": b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(range(256)),
        "enc/latin1.py": "# caf\xe9\nimport os\n".encode("latin-1"),
        "enc/utf16.py": "import os\n".encode("utf-16"),
        "broken/syntax.py": "def f(:\n    return\n",
        "broken/truncated.cu": "__global__ void k(float* x) {\n  if (threadIdx.x < 4) {\n",
        "empty/empty.cu": "",
        "broken/notebook.ipynb": "{\"cells\": [",
        "broken/pyproject.toml": "[project\nname = 'x'\n",
        "dir_named_like.cu/inner.txt": "not a source",
        "big/huge.cu": "// padding\n" * 20000,
    })
    os.mkfifo(tmp_path / "fifo.cu")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    code, report = run_json(tmp_path, "--max-file-size", "100k")
    assert code == baseline_code
    good = [(f["path"], f["line"], f["rule"]) for f in baseline["findings"]]
    assert [(f["path"], f["line"], f["rule"]) for f in report["findings"]] == good
    errors = {e["path"]: e["message"] for e in report["errors"]}
    assert errors["bin/kernel.cu"] == "binary file (NUL bytes)"
    assert errors["broken/syntax.py"].startswith("cannot parse: syntax error")
    assert errors["broken/notebook.ipynb"].startswith("cannot parse: notebook is not valid JSON")
    assert errors["broken/pyproject.toml"].startswith("invalid TOML")
    assert "file size limit" in errors["big/huge.cu"]
    assert "enc/latin1.py" not in errors and "enc/utf16.py" not in errors
    assert report["summary"]["files_failed"] == len(errors)
    assert report["summary"]["files_partial"] >= 2  # latin-1 text and the truncated kernel
    assert "fifo.cu" not in errors and "dangling.py" not in errors


def test_scanned_tree_is_not_modified_and_not_executed(tmp_path, run_json):
    marker = tmp_path / "EXECUTED"
    payload = f"open({str(marker)!r}, 'w').write('ran')\n"
    write_tree(tmp_path / "repo", {
        "setup.py": payload + "from setuptools import setup\nsetup(name='x', install_requires=['pynvml'])\n",
        "conftest.py": payload,
        "pkg/__init__.py": payload + "import tensorrt_llm\n",
    })
    before = {p: p.read_bytes() for p in (tmp_path / "repo").rglob("*") if p.is_file()}
    run_json(tmp_path / "repo")
    after = {p: p.read_bytes() for p in (tmp_path / "repo").rglob("*") if p.is_file()}
    assert not marker.exists()
    assert before == after
