"""Bad input is reported and skipped; the rest of the scan goes on (a file left unscanned fails the run:
tests/test_fail_closed.py)."""
import os

import pytest

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
    partial = {e["path"]: e["reason"] for e in report["partial"]}
    assert "broken/syntax.py" not in errors   # scanned past its bad line (auditor/parse/pyrecover.py)
    assert partial["broken/syntax.py"].startswith("cannot parse: syntax error at line 1")
    assert errors["broken/notebook.ipynb"].startswith("cannot parse: notebook is not valid JSON")
    assert errors["broken/pyproject.toml"].startswith("invalid TOML")
    assert "file size limit" in errors["big/huge.cu"]
    # Python refuses a source that is not UTF-8 and declares no other encoding (PEP 263), so it is not scanned
    # either: a could-not-scan file, never a guess at its text
    assert "decode" in errors["enc/latin1.py"] and "enc/utf16.py" not in errors
    assert report["summary"]["files_failed"] == len(errors)
    assert report["summary"]["files_partial"] >= 1  # the truncated kernel
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


@pytest.mark.slow
def test_hostile_tree_keeps_good_findings(tmp_path, run_json):
    write_tree(tmp_path, {
        "good/serve.py": "import tensorrt_llm\n",
        "good/kernel.cu": "__global__ void k(unsigned* m) {\r\n  m[0] = __ballot_sync(0xffffffff, 1);\r\n}\r\n",
        "minified/one_line.cuh": "__device__ int v0=0;" * 250_000 + "\n",
        "minified/one_line.py": "x=1;" * 250_000 + "\n",
        "deep/nested.py": "x = " + "[" * 3000 + "]" * 3000 + "\n",
        "big/generated.cu": "__device__ int f0() { return 0; }\n" * 700_000,
        "names/with space.py": "import pynvml\n",
        "names/ünïcödé.cu": "__device__ void k() { int lane = threadIdx.x & 31; (void)lane; }\n",
        "names/new\nline.py": "import pynvml\n",
    })
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.py").write_text("import tensorrt_llm\n")
    (tmp_path / "escape").symlink_to(outside, target_is_directory=True)
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    code, report = run_json(tmp_path, "--max-file-size", "8M")
    got = {(f["path"], f["line"], f["rule"]) for f in report["findings"]}
    assert ("good/serve.py", 1, "RA100") in got
    assert ("good/kernel.cu", 2, "RA200") in got  # CRLF line endings keep line numbers
    assert ("names/with space.py", 1, "RA112") in got
    assert ("names/new\\x0aline.py", 1, "RA112") in got   # a newline in a name is shown, never obeyed
    assert any(p == "names/ünïcödé.cu" for p, _, _ in got)
    assert not any(p.startswith(("escape", "loop")) for p, _, _ in got)  # links are not followed
    errors = {e["path"]: e["message"] for e in report["errors"]}
    assert "file size limit" in errors["big/generated.cu"]
    partial = {e["path"]: e["reason"] for e in report["partial"]}
    assert "deep/nested.py" not in errors and partial["deep/nested.py"].startswith("cannot parse")
    assert "minified/one_line.py" not in errors and "minified/one_line.cuh" not in errors
    assert code == 1


def test_unreadable_file_is_listed(tmp_path, run_json, monkeypatch):
    write_tree(tmp_path, {"locked.py": "import tensorrt_llm\n", "open.py": "import pynvml\n"})
    (tmp_path / "locked.py").chmod(0)
    if os.geteuid() == 0:   # root reads every file whatever its mode: make the open fail as it would for a user
        real_open = os.open

        def refuse_locked(path, *args, **kwargs):
            if os.fspath(path).endswith("locked.py"):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", refuse_locked)
    code, report = run_json(tmp_path)
    assert code == 1
    assert report["errors"] == [{"path": "locked.py", "message": "cannot read: Permission denied"}]
    assert {e["path"] for e in report["errors"]} == {"locked.py"}
    assert [f["path"] for f in report["findings"]] == ["open.py"]


@pytest.mark.slow
def test_a_file_over_the_time_budget_is_reported_and_the_scan_goes_on(tmp_path, run_json):
    write_tree(tmp_path / "warm", {"serve.py": "import tensorrt_llm\n", "k.cu": "__global__ void k() {}\n"})
    run_json(tmp_path / "warm")  # imports and rule compilation happen before the budget matters
    write_tree(tmp_path / "repo", {
        "slow/generated.cu": "__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }\n" * 300_000,
        "app/serve.py": "import tensorrt_llm\n",
    })
    code, report = run_json(tmp_path / "repo", "--time-budget", "1", "--max-file-size", "64M")
    errors = {e["path"]: e["message"] for e in report["errors"]}
    assert errors == {"slow/generated.cu": "skipped: scanning took over the 1 s per-file time budget"}
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [("app/serve.py", "RA100")]
    assert code == 1


def test_a_fifo_or_device_named_on_the_command_line_fails_the_run_without_blocking(tmp_path, run_json):
    # `git diff --name-only | xargs rocm-audit check` passes names; one that is a FIFO used to block the macro
    # pre-pass forever, and `check /dev/zero` said READY with exit 0 after scanning nothing
    write_tree(tmp_path, {"src/ok.py": "import os\n"})
    os.mkfifo(tmp_path / "src" / "kernel.cu")
    code, report = run_json("check", tmp_path / "src" / "kernel.cu", tmp_path / "src" / "ok.py")
    assert code == 1
    assert {e["path"]: e["message"] for e in report["errors"]} == {
        "kernel.cu": "not read: not a regular file or directory"}
    assert report["complete"] is False and "kernel.cu" in report["fails_closed"][0]["message"]
    code, report = run_json("check", "/dev/zero")
    assert code == 1 and report["errors"][0]["message"] == "not read: not a regular file or directory"


def test_a_fifo_swapped_in_after_discovery_is_refused_at_once(tmp_path):
    from auditor.match.rulebook import load_rulebook
    from auditor.run.scan.file import scan_file
    from auditor.types import SourceFile

    fifo = tmp_path / "kernel.cu"
    os.mkfifo(fifo)
    result = scan_file(SourceFile("kernel.cu", str(fifo), "cuda"), load_rulebook())
    assert result.error == "cannot read: a FIFO, not a regular file"
