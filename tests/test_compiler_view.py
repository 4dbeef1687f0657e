"""The scan reads what the compiler and the interpreter read: line ends as nvcc, GCC and Python end lines,
directives only outside comments and literals, Python decoded as its coding declaration says, every file name a
compiler takes as C/C++/CUDA, and any file a scanned file #includes. Each case is a pull request on a temporary
git repository judged by the README's CI command (and with a baseline, as the hooks run)."""
import pytest

from auditor.match.inputs.kinds import classify
from tests.conftest import fast_first, run_in_repo
from tests.gitrepo import GitRepo

CI = ("check", ".", "--diff-base", "main", "--format", "github", "--no-progress", "-j", "1")
BASE = {"app/serve.py": "import os\n", "README.md": "a project\n"}
KERNEL = "__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }\n"
RA200 = "title=rocm-audit RA200"


def pull_request(tmp_path, files):
    repo = GitRepo(tmp_path / "repo", BASE)
    repo.git("checkout", "-q", "-b", "pr")
    repo.commit(files, "the pull request")
    return repo


def ci(capfd, repo, *extra):
    code, out, _ = run_in_repo(capfd, repo, *CI, *extra)
    return code, out


def with_baseline(capfd, repo):
    """The hooks' way: a baseline written on the base, then the change checked against it."""
    repo.git("checkout", "-q", "main")
    code, _, _ = run_in_repo(capfd, repo, "baseline", ".", "-o", "base.json", "--no-progress")
    assert code == 0
    repo.git("checkout", "-q", "pr")
    code, out, _ = run_in_repo(capfd, repo, "check", ".", "--baseline", "base.json", "--format", "github",
                               "--no-progress", "-j", "1")
    return code, out


@pytest.mark.parametrize("line_end", ["\r", "\r\n"])
def test_a_line_end_that_ends_a_comment_for_the_compiler_ends_it_for_the_scan(tmp_path, capfd, line_end):
    source = f"// tuned for sm90{line_end}{KERNEL}".encode()
    repo = pull_request(tmp_path, {"csrc/k.cu": source})
    code, out = ci(capfd, repo)
    assert code == 1
    assert f"::error file=csrc/k.cu,line=2,col=55,{RA200}" in out
    code, out = with_baseline(capfd, repo)
    assert code == 1 and f"::error file=csrc/k.cu,line=2,col=55,{RA200}" in out


def test_a_comment_continued_by_a_backslash_covers_the_next_line_as_for_the_compiler(tmp_path, capfd):
    repo = pull_request(tmp_path, {"csrc/k.cu": f"// old version \\\n{KERNEL}{KERNEL.replace('k(', 'k2(')}"})
    code, out = ci(capfd, repo)
    assert code == 1
    assert "file=csrc/k.cu,line=2," not in out    # a comment line to nvcc: not code
    assert f"::error file=csrc/k.cu,line=3,col=56,{RA200}" in out


def test_python_lines_end_at_a_lone_cr_as_python_ends_them(tmp_path, capfd):
    repo = pull_request(tmp_path, {"app/serve.py": b"import os  # fast path\rimport tensorrt_llm\n"})
    code, out = ci(capfd, repo)
    assert code == 1
    assert "::error file=app/serve.py,line=2,col=1,title=rocm-audit RA100" in out


@pytest.mark.parametrize("hiding", [
    "/*\n#if 0\n*/\n{kernel}/*\n#endif\n*/\n",                     # a directive inside a block comment
    'const char* s = R"(\n#if 0\n)";\n{kernel}const char* t = R"(\n#endif\n)";\n',   # inside a raw string
])
def test_a_directive_inside_a_comment_or_a_literal_hides_nothing(tmp_path, capfd, hiding):
    text = hiding.format(kernel=KERNEL)
    line = text.split("\n").index(KERNEL.rstrip("\n")) + 1
    repo = pull_request(tmp_path, {"csrc/k.cu": text})
    code, out = ci(capfd, repo)
    assert code == 1
    assert f"::error file=csrc/k.cu,line={line},col=55,{RA200}" in out


@pytest.mark.parametrize("encoding, hidden", [
    ("utf-7", b"+AGk-mport tensorrt_llm\n"),
    ("unicode_escape", b"\\x69mport tensorrt_llm\n"),
])
def test_python_is_decoded_as_its_coding_declaration_says(tmp_path, capfd, encoding, hidden):
    source = f"# -*- coding: {encoding} -*-\nimport os\n".encode() + hidden
    compile(source, "serve.py", "exec")   # Python runs it as an import of tensorrt_llm
    repo = pull_request(tmp_path, {"app/serve.py": source})
    code, out = ci(capfd, repo)
    assert code == 1
    assert "::error file=app/serve.py,line=3,col=1,title=rocm-audit RA100" in out


@pytest.mark.parametrize("source, why", [
    (b"# coding: utf-7\nimport os\n+AGk-mport tensorrt_llm\n\xff\n", "cannot decode as utf-7"),
    (b"# coding: no-such-codec\nimport tensorrt_llm\n", "cannot decode: unknown encoding"),
])
def test_python_that_cannot_be_decoded_as_declared_fails_closed(tmp_path, capfd, source, why):
    repo = pull_request(tmp_path, {"app/serve.py": source})
    code, out = ci(capfd, repo)
    assert code == 1
    assert "::error file=app/serve.py,title=rocm-audit%3A fails closed::app/serve.py: not scanned completely" in out
    assert why in out
    code, out = ci(capfd, repo, "--allow-partial")
    assert code == 0, out


COMPILER_NAMES = ["k.ipp", "k.tcc", "k.ixx", "k.cppm", "k.def", "k.c++", "k.h++", "k.cuinc", "k.cu.in", "k.cuh.in",
                  "k.txx", "k.ii"]


@pytest.mark.parametrize("name", COMPILER_NAMES)
def test_every_name_a_compiler_takes_is_a_c_or_cuda_kind(name):
    """The fast half of the gate test below: each name is read as C/C++ or CUDA."""
    assert classify(f"csrc/{name}") in ("cuda", "cpp"), name


@pytest.mark.parametrize("name", fast_first(COMPILER_NAMES))
def test_every_name_a_compiler_takes_as_c_or_cuda_is_scanned(tmp_path, capfd, name):
    repo = pull_request(tmp_path, {f"csrc/{name}": KERNEL})
    code, out = ci(capfd, repo)
    assert code == 1
    assert f"::error file=csrc/{name},line=1,col=55,{RA200}" in out


@pytest.mark.parametrize("include, path", [
    ('#include "kern.txt"', "csrc/kern.txt"),                 # beside the includer
    ('#include "../data/kern.inc.txt"', "data/kern.inc.txt"),  # relative, up a directory
    ("#include <detail/kern>", "include/detail/kern"),       # through an include directory the build adds
])
def test_a_file_a_scanned_file_includes_is_scanned_whatever_its_name(tmp_path, capfd, include, path):
    repo = pull_request(tmp_path, {"csrc/main.cu": f"{include}\nint main() {{ return 0; }}\n", path: KERNEL,
                                   "docs/notes.txt": "__ballot_sync(0xffffffff, 1) in prose\n"})
    code, out = ci(capfd, repo)
    assert code == 1
    assert f"::error file={path},line=1,col=55,{RA200}" in out
    assert "docs/notes.txt" not in out   # a file nothing includes is not code
