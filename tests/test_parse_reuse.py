"""Reading across conditionals re-parses a file with some lines blanked; tree-sitter re-reads only around those
lines and reuses the rest of the first tree (parse/cuda._reparse). The trees must be the ones a fresh parse
gives, and the faster macro-shape passes must blank what they blanked before."""

import pytest
import tree_sitter as ts

from auditor.parse import cuda
from auditor.parse.conditionals import read_across
from auditor.parse.macroshapes import blank_macro_shapes
from tests.test_partial_conditionals import SPLITS


def _shape(tree: ts.Tree) -> list[tuple[str, int, int, bool]]:
    out, cursor = [], tree.walk()
    while True:
        node = cursor.node
        out.append((node.type, node.start_byte, node.end_byte, node.is_missing))
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return out


@pytest.mark.parametrize("case", sorted(SPLITS))
def test_trees_read_across_conditionals_are_those_a_fresh_parse_gives(case):
    source = ("int before(int a) { return a + 1; }\n" * 40 + SPLITS[case]
              + "int after(int a) { return a - 1; }\n" * 40).encode()
    parser = ts.Parser(cuda.CUDA)
    readable = blank_macro_shapes(source)
    reading = read_across(readable, lambda text: cuda._lost(parser.parse(text).root_node))
    assert len(reading.texts) > 1   # the file is read across its conditionals: the re-parse is exercised
    tree = cuda.parse(source)
    got = [tree.tree, *tree.others]
    assert [_shape(t) for t in got] == [_shape(parser.parse(text)) for text in reading.texts]
    assert not tree.partial


def test_a_reparse_after_blanking_lines_equals_a_fresh_parse():
    old = b"void f(int a) {\n#if X\n  if (a) {\n#else\n  if (!a) {\n#endif\n    a++;\n  }\n}\n" + b"int g;\n" * 30
    lines = old.split(b"\n")
    new = b"\n".join(b" " * len(line) if n in (1, 3, 4, 5) else line for n, line in enumerate(lines))
    parser = ts.Parser(cuda.CUDA)
    first = parser.parse(old)
    again = cuda._reparse(parser, first, old, new)
    assert _shape(again) == _shape(parser.parse(new))
    assert _shape(first) == _shape(parser.parse(old))   # the first tree is left as it was
    assert not again.root_node.has_error


@pytest.mark.parametrize(("code", "expected"), [
    # a comma expression in a parenthesized argument: its top-level comma becomes `|`; parentheses and commas in
    # strings and comments do not count
    (b'  CL_CHECK((k = f(p, "a(,", &e), /* ( , */ e));\n', b'  CL_CHECK((k = f(p, "a(,", &e)| /* ( , */ e));\n'),
    (b"  g((a, b), {c, d});\n", b"  g((a| b), {c, d});\n"),
    (b"  g(x, (a; b), c);\n", b"  g(x, (a; b), c);\n"),
    # a macro between the return type and the name, on a line after one that is not such a shape
    (b"if (x) y(1);\n__global__ void C10_LAUNCH_BOUNDS_1(256) kernel(float *p) {}\n",
     b"if (x) y(1);\n__global__ void " + b" " * len(b"C10_LAUNCH_BOUNDS_1(256)") + b" kernel(float *p) {}\n"),
    (b"struct s { atomic_int GGML_CACHE_ALIGN n; };\n",
     b"struct s { atomic_int " + b" " * len(b"GGML_CACHE_ALIGN") + b" n; };\n"),
    (b"#if __has_include(<sycl/x.hpp>)\n#endif\n", b"#if __has_include(_sycl_x_hpp_)\n#endif\n"),
    (b"extern DECL_FATTN_CASE(512, 8);\n", b" " * len(b"extern") + b" DECL_FATTN_CASE(512, 8);\n"),
])
def test_macro_shapes_still_blanked(code, expected):
    assert blank_macro_shapes(code) == expected
