from auditor.match.suppress import read_suppressions


def test_trailing_and_own_line_and_file_ignore():
    text = (
        "import tensorrt_llm  # rocm-audit: ignore[RA101]\n"   # 1
        "# rocm-audit: ignore[RA102, RA103]\n"                 # 2
        "import flash_attn_interface\n"                        # 3
        "import pynvml\n"                                      # 4
    )
    s = read_suppressions(text, comments="python")
    assert s.covers("RA101", 1) and not s.covers("RA101", 3)
    assert s.covers("RA102", 3) and s.covers("RA103", 3) and not s.covers("RA102", 2)
    assert not s.covers("RA104", 4)
    whole = read_suppressions("// rocm-audit: file-ignore[RA301]\n__device__ void f() {}\n", comments="c")
    assert whole.covers("RA301", 2) and whole.covers("RA301", None) and not whole.covers("RA302", 2)


def test_unknown_ids_are_reported():
    s = read_suppressions("x = 1  # rocm-audit: ignore[RA999, RA101]\n", known={"RA101": "RA101"}, comments="python")
    assert s.unknown_ids == ((1, "RA999"),)


# --- suppressions are read from real comments only, and the gate decides which it honours ---------------------

import pytest  # noqa: E402

from tests.conftest import run_in_repo  # noqa: E402
from tests.gitrepo import GitRepo  # noqa: E402

CI = ("check", ".", "--diff-base", "main", "--format", "github", "--no-progress", "-j", "1")
KERNEL = "__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }"
RA100_AT_3 = "::error file=app/serve.py,line=3,col=1,title=rocm-audit RA100"


def test_markers_are_read_from_comment_tokens_only():
    python = read_suppressions('S = "rocm-audit: file-ignore[RA100]"\nT = "# rocm-audit: ignore[RA100]"\n'
                               "import x  # rocm-audit: ignore[RA101]\n", comments="python")
    assert not python.covers("RA100", 1) and not python.covers("RA100", 2) and python.covers("RA101", 3)
    c = read_suppressions('const char* s = "// rocm-audit: file-ignore[RA200]";\n'
                          "/* a block\n   rocm-audit: ignore[RA201] */\nint x;\n", comments="c")
    assert not c.covers("RA200", 2) and c.covers("RA201", 4)
    hashed = read_suppressions('run: echo "# rocm-audit: file-ignore[RA500]"\nx  # rocm-audit: ignore[RA501]\n')
    assert not hashed.covers("RA500", 2) and hashed.covers("RA501", 2)
    assert not read_suppressions('{"source": ["x  # rocm-audit: file-ignore[RA100]"]}', comments="none").markers


def pull_request(tmp_path, files, base=None):
    repo = GitRepo(tmp_path / "repo", base or {"app/serve.py": "import os\n", "README.md": "a project\n"})
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit(files, "the pull request")
    return repo


@pytest.mark.parametrize("hiding", ['S = "rocm-audit: file-ignore[RA100]"', "# rocm-audit: file-ignore"])
def test_a_string_or_a_bare_file_ignore_silences_nothing(tmp_path, capfd, hiding):
    repo = pull_request(tmp_path, {"app/serve.py": f"import os\n{hiding}\nimport tensorrt_llm\n"})
    code, out, _ = run_in_repo(capfd, repo, *CI, "--allow-new-suppressions")
    assert code == 1
    assert RA100_AT_3 in out
    if "#" in hiding:
        assert "::warning file=app/serve.py,line=2" in out and "must name the rules it suppresses" in out


def test_no_inline_suppressions_honours_none(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": "import os\n\nimport tensorrt_llm  # rocm-audit: ignore[RA100]\n"})
    code, out, _ = run_in_repo(capfd, repo, "check", ".", "--format", "github", "--no-progress", "-j", "1")
    assert code == 0, out
    code, out, _ = run_in_repo(capfd, repo, "check", ".", "--format", "github", "--no-progress", "-j", "1",
                               "--no-inline-suppressions")
    assert code == 1
    assert RA100_AT_3 in out


def test_a_suppression_the_change_adds_does_not_silence_what_it_adds(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": "import os\n\nimport tensorrt_llm  # rocm-audit: ignore[RA100]\n",
                                   "csrc/k.cu": f"// rocm-audit: file-ignore[RA200]\n{KERNEL}\n"})
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 1
    assert RA100_AT_3 in out
    assert "::error file=csrc/k.cu,line=2,col=55,title=rocm-audit RA200" in out
    code, out, _ = run_in_repo(capfd, repo, *CI, "--allow-new-suppressions")   # the user's own choice
    assert code == 0, out


def test_only_the_base_config_allows_new_suppressions(tmp_path, capfd):
    change = {"app/serve.py": "import os\n\nimport tensorrt_llm  # rocm-audit: ignore[RA100]\n"}
    allowed = pull_request(tmp_path / "allowed", change, {"app/serve.py": "import os\n",
                                                          ".rocm-audit.toml": "allow-new-suppressions = true\n"})
    code, out, _ = run_in_repo(capfd, allowed, *CI)
    assert code == 0, out
    self_allowed = pull_request(tmp_path / "self", {**change, ".rocm-audit.toml": "allow-new-suppressions = true\n"})
    code, out, _ = run_in_repo(capfd, self_allowed, *CI)
    assert code == 1
    assert RA100_AT_3 in out


def test_a_suppression_the_base_had_still_silences(tmp_path, capfd):
    base = {"app/serve.py": "import os\n\nimport tensorrt_llm  # rocm-audit: ignore[RA100]\n"}
    repo = pull_request(tmp_path, {"app/serve.py": base["app/serve.py"] + "x = 1\n"}, base)
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 0, out


def test_a_lone_cr_does_not_move_a_new_suppression_off_the_lines_git_says_were_added(tmp_path, capfd):
    base = {"csrc/k.cu": b"// one\r// two\rint x;\n"}   # three lines for the compiler, one for git
    repo = pull_request(tmp_path, {"csrc/k.cu": base["csrc/k.cu"] + f"{KERNEL} // rocm-audit: ignore\n".encode()},
                        base)
    code, out, _ = run_in_repo(capfd, repo, *CI)
    assert code == 1
    assert "::error file=csrc/k.cu,line=4,col=55,title=rocm-audit RA200" in out
