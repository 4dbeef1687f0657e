from auditor.scan.suppress import read_suppressions


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
