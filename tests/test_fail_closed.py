"""Fail closed: a file the scanner cannot finish fails the gate like a finding at its
threshold, unless the invocation allows it; Python that `ast` cannot parse is still read for its imports.
Each attack is a pull request on a temporary git repository, judged by the README's CI command."""
import json
import os

import pytest

from tests.conftest import run_in_repo
from tests.gitrepo import GitRepo

pytestmark = pytest.mark.slow   # pull requests on git repositories, judged end to end

CI = ("check", ".", "--diff-base", "main", "--format", "github", "--no-progress", "-j", "1")
BASE = {"app/serve.py": "import torch\n", "README.md": "a project\n"}


run = run_in_repo


def pull_request(tmp_path, files, base=BASE):
    repo = GitRepo(tmp_path / "repo", base)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit(files, "the pull request")
    return repo


@pytest.mark.parametrize("hiding_line", ["type Alias = int", "def f(:", "x = (1,\n"])
def test_a_syntax_error_does_not_hide_an_import_under_the_ci_command(tmp_path, capfd, hiding_line):
    repo = pull_request(tmp_path, {"app/serve.py": f"import torch\n{hiding_line}\nimport tensorrt_llm\n"})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    line = 2 + hiding_line.count("\n")
    assert f"::error file=app/serve.py,line={line + 1},col=1,title=rocm-audit RA100" in out


def test_an_import_on_a_skipped_line_is_still_read(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": "type Alias = int; import tensorrt_llm\n"})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    assert "::error file=app/serve.py,line=1,col=19,title=rocm-audit RA100" in out


def unrecoverable(body: str) -> str:
    """More broken lines than the repair loop mends: only the import statements can be read."""
    return "".join(f"x{i} = ]\n" for i in range(40)) + body


def test_python_read_only_for_its_imports_is_not_scanned_and_fails_unless_allowed(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": unrecoverable("import os\ntorch.cuda.nccl.version()\n")})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    assert "::error file=app/serve.py,title=rocm-audit%3A fails closed::app/serve.py: not scanned completely " \
           "(cannot parse: syntax error at line 1" in out
    code, out, _ = run(capfd, repo, *CI, "--allow-partial")
    assert code == 0, out


def test_imports_of_an_unrecoverable_file_still_count(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": unrecoverable("from tensorrt_llm import (LLM,\n    SamplingParams)\n")})
    code, out, _ = run(capfd, repo, *CI, "--allow-partial")
    assert code == 1   # allowed to be partial, but its import is a critical finding
    assert "::error file=app/serve.py,line=41" in out and "RA100" in out


def test_a_kernel_padded_past_the_size_cap_fails_the_ci_command(tmp_path, capfd):
    kernel = "__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }\n" + "// pad\n" * 400
    repo = pull_request(tmp_path, {"csrc/k.cu": kernel})
    code, out, _ = run(capfd, repo, *CI, "--max-file-size", "1k")
    assert code == 1
    assert "::error file=csrc/k.cu,title=rocm-audit%3A fails closed::csrc/k.cu: not scanned completely " \
           "(skipped: 0.0 MB is over the 0 MB file size limit)" in out
    code, out, _ = run(capfd, repo, *CI, "--max-file-size", "1k", "--allow-partial")
    assert code == 0, out
    assert "could not scan csrc/k.cu" in out   # still named, in the log


def test_a_file_left_unscanned_before_the_change_is_known_under_diff_base(tmp_path, capfd):
    repo = GitRepo(tmp_path / "repo", {**BASE, "csrc/big.cu": "// pad\n" * 400})
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit({"app/other.py": "import os\n"})
    code, out, _ = run(capfd, repo, *CI, "--max-file-size", "1k")
    assert code == 0, out
    assert "could not scan csrc/big.cu" in out


@pytest.mark.parametrize("setting", ["time-budget = 1e-6", "max-file-size = 1"])
def test_a_tree_config_that_starves_the_scan_fails_the_run(tmp_path, capfd, setting):
    repo = pull_request(tmp_path, {".rocm-audit.toml": f"{setting}\nallow-partial = true\n",
                                   "app/serve.py": "import tensorrt_llm\n"})
    code, out, err = run(capfd, repo, "check", ".", "--no-progress", "-q", "-j", "1")
    assert code == 1
    assert "app/serve.py: not scanned completely (skipped:" in out
    assert "allow-partial ignored" in err     # a tree config may not allow it


def test_the_user_s_own_config_may_allow_partial_files(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/big.cu": "// pad\n" * 400})
    own = tmp_path / "mine.toml"
    own.write_text("allow-partial = true\n")
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "-q", "--max-file-size", "1k",
                       "--config", str(own))
    assert code == 0, out


def test_every_format_names_the_unscanned_file(tmp_path, capfd):
    repo = pull_request(tmp_path, {"csrc/k.cu": "// pad\n" * 400})
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "--max-file-size", "1k", "--format", "json",
                       "--sarif", str(tmp_path / "r.sarif"), "--markdown", str(tmp_path / "r.md"),
                       "--html", str(tmp_path / "r.html"))
    assert code == 1
    report = json.loads(out)
    assert report["complete"] is False
    assert report["fails_closed"][0]["path"] == "csrc/k.cu"
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any(n["level"] == "error" and n["message"]["text"].startswith("csrc/k.cu: not scanned completely")
               for n in notes)
    assert "- csrc/k.cu: not scanned completely" in (tmp_path / "r.md").read_text()
    page = (tmp_path / "r.html").read_text()
    assert "<h2>What fails this run besides findings (1)</h2>" in page
    assert "<li>csrc/k.cu: not scanned completely (" in page
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "--format", "json")
    assert code == 0 and json.loads(out)["complete"] is True


def test_a_kernel_with_syntax_errors_is_partial_and_its_findings_count(tmp_path, capfd):
    broken = "__global__ void k(unsigned* m) {\n  m[0] = __ballot_sync(0xffffffff, 1);\n  if (\n"
    repo = pull_request(tmp_path, {"csrc/k.cu": broken, "csrc/only_broken.cu": "__global__ void j( {\n"})
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "--format", "json")
    report = json.loads(out)
    assert code == 1 and [(f["path"], f["line"]) for f in report["findings"]] == [("csrc/k.cu", 2)]
    assert {p["path"] for p in report["partial"]} == {"csrc/k.cu", "csrc/only_broken.cu"}
    assert report["complete"] is True and report["fails_closed"] == []   # partial is scanned, not unscanned


BROKEN_DECLARATION = "template<typename T struct Tile {};\n"
HOPPER_KERNEL = '__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n'


def test_a_broken_line_does_not_hide_the_kernel_after_it_under_the_ci_command(tmp_path, capfd):
    """tree-sitter swallows the code after a broken declaration into one ERROR node; the lines after it are read
    again with the broken line blanked, so the Hopper-only PTX below it still fails the gate."""
    repo = pull_request(tmp_path, {"csrc/k.cu": BROKEN_DECLARATION + HOPPER_KERNEL})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    assert "::error file=csrc/k.cu,line=2,col=23,title=rocm-audit RA303 ptx-hopper-blackwell (critical)" in out


def test_code_read_past_a_broken_line_keeps_its_preprocessor_guard(tmp_path, capfd):
    """Directive lines are never blanked: the kernel read past the broken line is still behind its #ifndef."""
    kernel = BROKEN_DECLARATION + "#ifndef USE_ROCM\n" + HOPPER_KERNEL + "#endif\n"
    repo = pull_request(tmp_path, {"csrc/k.cu": kernel})
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "--format", "json")
    report = json.loads(out)
    assert [(f["rule"], f["line"], f["disposition"]) for f in report["findings"]] == [("RA303", 3, "guarded")]
    assert report["partial"] == [{"path": "csrc/k.cu",
                                  "reason": "syntax errors on line 1: the code there was not scanned"}]
    assert code == 0


def test_code_a_change_adds_where_no_parse_reads_it_fails_the_ci_command(tmp_path, capfd):
    """Twelve broken declarations before the kernel: more than the parser reads past, so the kernel stays unread.
    The lines the change adds there hold PTX of a critical rule: the run fails closed and says why."""
    repo = pull_request(tmp_path, {"csrc/k.cu": BROKEN_DECLARATION * 12 + HOPPER_KERNEL})
    code, out, _ = run(capfd, repo, *CI)
    assert code == 1
    assert ("::error file=csrc/k.cu,title=rocm-audit%3A fails closed::csrc/k.cu: not scanned completely (syntax "
            "errors from line 1 leave code the change adds unread, with words of RA303 ptx-hopper-blackwell") in out
    code, out, _ = run(capfd, repo, *CI, "--allow-partial")
    assert code == 0 and "fails closed" not in out
    code, out, _ = run(capfd, repo, "check", ".", "--diff-base", "main", "--format", "json", "--no-progress")
    assert code == 1 and json.loads(out)["complete"] is False


def test_unread_lines_the_change_did_not_add_or_with_no_rule_words_stay_partial(tmp_path, capfd):
    """An unread stretch that was there at the base is known, not new; one with no rule's words hides nothing."""
    base = {**BASE, "csrc/old.cu": BROKEN_DECLARATION * 12 + HOPPER_KERNEL}
    repo = pull_request(tmp_path, {"csrc/old.cu": "// a comment the change adds\n" + base["csrc/old.cu"],
                                   "csrc/new.cu": BROKEN_DECLARATION * 12 + "int plain(int v) { return v + 1; }\n"},
                        base=base)
    code, out, _ = run(capfd, repo, *CI)
    assert code == 0, out
    assert "fails closed" not in out


def test_a_worker_that_dies_on_a_file_fails_the_run(tmp_path, capfd, monkeypatch):
    import auditor.run.runner.workers

    real = auditor.run.runner.workers.scan_file

    def dies_on_crash(source, *args, **kwargs):
        if source.path == "app/crash.py":
            os._exit(9)    # as a segfault in a parser would end the child
        return real(source, *args, **kwargs)

    monkeypatch.setattr(auditor.run.runner.workers, "scan_file", dies_on_crash)
    repo = pull_request(tmp_path, {"app/crash.py": "import os\n", "app/other.py": "import pynvml\n"})
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "-q", "--no-cache", "-j", "1",
                       "--fail-on", "critical")
    assert code == 1   # pynvml is high, below the threshold: only the unscanned file fails it
    assert "app/crash.py: not scanned completely (not scanned: the process scanning it died (exit status 9))" in out
    code, out, _ = run(capfd, repo, "check", ".", "--no-progress", "-q", "--no-cache", "-j", "1",
                       "--fail-on", "critical", "--allow-partial")
    assert code == 0, out
