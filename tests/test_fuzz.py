"""Property tests: parsers, engines and the suppression reader never raise on arbitrary input, and a
scan of the same text twice gives the same findings."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.parse.manifest import READERS, ManifestError, pip_install_commands
from auditor.parse.preproc import line_states
from auditor.truth.cpp import PreprocFacts, evaluate
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import InputError, decode, scan_file
from auditor.types import SourceFile
from auditor.match.suppress import read_suppressions

pytestmark = pytest.mark.slow   # property-based runs (hypothesis)

RULEBOOK = load_rulebook()
FACTS = PreprocFacts.from_guards(RULEBOOK.guards)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Text built from the pieces real sources are made of, so the engines get past their first checks.
CUDA_PIECES = st.sampled_from([
    "#include <cuda.h>\n", "#if defined(USE_ROCM)\n", "#else\n", "#endif\n", "#ifdef __CUDA_ARCH__\n",
    "asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(x));\n", "__shfl_xor_sync(0xffffffff, v, 1);\n",
    "threadIdx.x % 32", "cudaMalloc(&p, n);", "{", "}", "(", ")", "\"", "//", "/*", "*/", "\\\n", "#define X",
])
PY_PIECES = st.sampled_from([
    "import tensorrt_llm\n", "from flash_attn_interface import f\n", "if torch.version.hip:\n", "else:\n",
    "    ", "torch.version.cuda.split('.')\n", "try:\n", "except ImportError:\n", "f'{x:0.3f}'", "(", ")",
    "'''", "\"", "#", "\\", "lambda: ", "nvidia-smi", "\n",
])
TEXTS = st.one_of(st.text(max_size=400), st.lists(CUDA_PIECES | PY_PIECES, max_size=40).map("".join))
KINDS = st.sampled_from([
    ("k.cu", "cuda"), ("k.cpp", "cpp"), ("m.py", "python"), ("setup.py", "python"), ("n.ipynb", "notebook"),
    ("requirements.txt", "manifest"), ("pyproject.toml", "manifest"), ("setup.cfg", "manifest"),
    ("environment.yml", "manifest"), ("Pipfile", "manifest"), ("CMakeLists.txt", "build"), ("Makefile", "build"),
    ("Dockerfile", "container"), (".github/workflows/ci.yml", "ci"), ("run.sh", "shell"),
])


@SETTINGS
@given(text=TEXTS, file=KINDS)
def test_scanning_any_text_never_raises_and_is_deterministic(text, file):
    path, kind = file
    # Through the isolation boundary a user's scan takes, which turns an exception into "internal error: …".
    source = SourceFile(path, f"/nonexistent/{path}", kind)
    first = scan_file(source, RULEBOOK, data=text.encode())
    second = scan_file(source, RULEBOOK, data=text.encode())
    assert first == second
    assert first.error is None or not first.error.startswith("internal error"), first.error


@SETTINGS
@given(data=st.binary(max_size=600))
def test_decoding_any_bytes_gives_text_or_a_clear_refusal(data):
    try:
        text, _note = decode(data)
    except InputError as err:
        assert "binary" in str(err)
    else:
        assert isinstance(text, str)


@SETTINGS
@given(text=TEXTS)
def test_readers_never_raise_unexpectedly(text):
    read_suppressions(text, frozenset({"RA100"}))
    pip_install_commands(text)
    line_states(text, FACTS)
    evaluate(text, FACTS)
    for reader in READERS.values():
        try:
            reader(text)
        except ManifestError:
            pass


@SETTINGS
@given(data=st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
        max_leaves=12,
    ).map(lambda value: __import__("json").dumps({"version": 1, "entries": value}).encode()),
))
def test_baseline_and_config_readers_fail_only_with_their_own_errors(data, tmp_path_factory):
    from auditor.config import ConfigError, read_config
    from auditor.run.gate.change import GateError, read_baseline

    folder = tmp_path_factory.mktemp("readers")
    baseline = folder / ".rocm-audit-baseline.json"
    baseline.write_bytes(data)
    try:
        read_baseline(baseline)
    except GateError:
        pass
    config = folder / ".rocm-audit.toml"
    config.write_bytes(data)
    try:
        read_config(config)
    except ConfigError:
        pass
