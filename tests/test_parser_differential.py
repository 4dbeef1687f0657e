"""Parser differential: the compiler's preprocessor (nvcc -E, else GCC's cpp) says which kernels a source
defines and on which line; rocm-audit must report each of them there. Each source below hides a kernel from a
reader that treats line ends, splices, comments or literals differently from the compiler."""
import re
import shutil
import subprocess

import pytest

from tests.conftest import fast_first, write_tree

KERNEL = "__global__ void {name}(unsigned* m) {{ m[0] = __ballot_sync(0xffffffff, 1); }}"
SOURCES: dict[str, bytes] = {
    "lone_cr.cu": ("// tuned for sm90\r" + KERNEL.format(name="k_cr") + "\n").encode(),
    "crlf.cu": ("// tuned\r\n" + KERNEL.format(name="k_crlf") + "\r\n").encode(),
    "cr_then_crlf.cu": ("// a\r\r\n" + KERNEL.format(name="k_cr_crlf") + "\n").encode(),
    "continued.cu": ("// old \\\n" + KERNEL.format(name="k_commented") + "\n" + KERNEL.format(name="k_after")
                     + "\n").encode(),
    "block_if0.cu": ("/*\n#if 0\n*/\n" + KERNEL.format(name="k_block") + "\n/*\n#endif\n*/\n").encode(),
    "raw_if0.cu": ('const char* s = R"x(\n#if 0\n)x";\n' + KERNEL.format(name="k_raw")
                   + '\nconst char* t = R"x(\n#endif\n)x";\n').encode(),
    "spliced_opener.cu": ("/\\\n* a comment\n#if 0\n*/\n" + KERNEL.format(name="k_spliced") + "\n/\\\n*\n#endif\n*/\n"
                          ).encode(),
    "string_slashes.cu": ('const char* u = "http://x/*"; ' + KERNEL.format(name="k_string") + "\n").encode(),
    "digit_separator.cu": ("int n = 1'000; int c = 'a';\n" + KERNEL.format(name="k_digits") + "\n").encode(),
    "dead.cu": ("#if 0\n" + KERNEL.format(name="k_dead") + "\n#endif\n" + KERNEL.format(name="k_live") + "\n"
                ).encode(),
}
DEFINITION = re.compile(r"\bvoid\s+(k_\w+)\s*\(.*\{")
LINEMARKER = re.compile(r'^# (\d+) "([^"]*)"')


def preprocessor() -> list[str]:
    if shutil.which("nvcc"):
        return ["nvcc", "-E", "-x", "cu"]
    if shutil.which("cpp"):
        return ["cpp", "-x", "c++", "-E"]
    pytest.skip("neither nvcc nor cpp is installed")


def compiled_kernels(path) -> set[tuple[str, int]]:
    """(kernel, line in the source) of each kernel definition the preprocessed output holds."""
    done = subprocess.run([*preprocessor(), str(path)], capture_output=True, text=True, check=True, timeout=120)
    kernels = set()
    current, line = None, 0
    for row in done.stdout.split("\n"):
        marker = LINEMARKER.match(row)
        if marker:
            line, current = int(marker.group(1)), marker.group(2)
            continue
        if current is not None and current.endswith(path.name):
            kernels.update((name, line) for name in DEFINITION.findall(row))
        line += 1
    return kernels


@pytest.mark.parametrize("name", fast_first(sorted(SOURCES), fast=2))
def test_every_kernel_the_compiler_emits_is_read(tmp_path, run_json, name):
    write_tree(tmp_path, {name: SOURCES[name]})
    expected = compiled_kernels(tmp_path / name)
    assert expected, "the compiler emits at least one kernel of each source"
    _, report = run_json(str(tmp_path), "--no-cache")
    found = {f["line"] for f in report["findings"] if f["rule"] == "RA200" and f["path"] == name}
    missed = sorted((kernel, line) for kernel, line in expected if line not in found)
    assert not missed, f"{name}: the compiler emits {missed}, rocm-audit did not report them"
