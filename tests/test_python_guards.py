"""Python code that a ROCm run never executes is reported as guarded, at info."""
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

RULEBOOK = load_rulebook()


def guarded_by_line(code: str) -> dict[int, bool]:
    result = scan_text_as("pkg/mod.py", "python", code, RULEBOOK)
    assert result.error is None
    return {f.span.line: f.guarded for f in result.findings}


def test_else_of_torch_version_hip_is_guarded():
    code = (
        "import torch\n"
        "if torch.version.hip:\n"
        "    from aiter import flash_attn_func\n"
        "else:\n"
        "    from flash_attn_interface import flash_attn_func\n"
        "from flash_attn_interface import flash_attn_varlen_func\n"
    )
    assert guarded_by_line(code) == {5: True, 6: False}


def test_negated_and_aliased_platform_checks():
    code = (
        "from vllm.platforms import current_platform\n"
        "if not current_platform.is_rocm():\n"
        "    import pynvml\n"
        "if current_platform.is_cuda():\n"
        "    import tensorrt_llm\n"
    )
    assert guarded_by_line(code) == {3: True, 5: True}


def test_early_return_under_rocm_test_guards_the_rest_of_the_block():
    code = (
        "import torch\n"
        "def attention(q, k, v):\n"
        "    if torch.version.hip is not None:\n"
        "        return torch.nn.functional.scaled_dot_product_attention(q, k, v)\n"
        "    from flash_attn_interface import flash_attn_func\n"
        "    return flash_attn_func(q, k, v)\n"
        "import pynvml\n"
    )
    assert guarded_by_line(code) == {5: True, 7: False}


def test_short_circuit_and_try_import_fallback():
    code = (
        "import torch\n"
        "ok = torch.version.cuda is not None and int(torch.version.cuda.split('.')[0]) >= 12\n"
        "major = int(torch.version.cuda.split('.')[0])\n"
        "try:\n"
        "    import pynvml\n"
        "except ImportError:\n"
        "    pynvml = None\n"
    )
    assert guarded_by_line(code) == {2: True, 3: False, 5: True}


def test_cuda_branch_of_an_if_elif_hip_chain():
    code = (
        "import os, torch\n"
        "if os.getenv('FORCE_CUDA') == '1' or torch.version.cuda is not None:\n"
        "    flags = ['-gencode', 'arch=compute_90a,code=sm_90a']\n"
        "elif torch.version.hip:\n"
        "    flags = ['--offload-arch=gfx942']\n"
        "extra = ['-gencode', 'arch=compute_80,code=sm_80']\n"
    )
    lines = guarded_by_line(code)
    assert lines[3] is True and lines[6] is False


def optional_by_line(code: str) -> dict[int, tuple[bool, bool]]:
    result = scan_text_as("pkg/mod.py", "python", code, RULEBOOK)
    assert result.error is None
    return {f.span.line: (f.guarded, f.optional) for f in result.findings}


def test_an_except_import_error_that_reraises_is_not_a_fallback():
    code = (
        "try:\n"
        "    import pynvml\n"
        "except ImportError:\n"
        "    raise ImportError('install pynvml')\n"
    )
    assert optional_by_line(code) == {2: (False, False)}


def test_an_except_import_error_that_logs_then_reraises_from_is_not_a_fallback():
    code = (
        "import logging\n"
        "try:\n"
        "    import pynvml\n"                                              # 3
        "except (ImportError, ModuleNotFoundError) as err:\n"
        "    logging.error('pynvml is required')\n"
        "    raise RuntimeError('install nvidia-ml-py') from err\n"
    )
    assert optional_by_line(code) == {3: (False, False)}


def test_availability_checked_and_type_checking_imports_are_optional():
    code = (
        "from typing import TYPE_CHECKING\n"
        "import importlib.util\n"
        "if TYPE_CHECKING:\n"
        "    import tensorrt_llm\n"                                    # 4
        "def fp8(layer):\n"
        "    if not is_te_available():\n"
        "        return layer\n"
        "    import transformer_engine.pytorch as te\n"                # 8
        "    return te.Linear(1, 1)\n"
        "if importlib.util.find_spec('pynvml') is not None:\n"
        "    import pynvml\n"                                          # 11
        "import pycuda.driver\n"                                       # 12: core
    )
    found = optional_by_line(code)
    assert found[4] == (False, True) and found[8] == (False, True) and found[11] == (False, True)
    assert found[12] == (False, False)


def test_a_module_level_name_holding_an_availability_check_is_that_check():
    code = (
        "import importlib.util\n"
        "trt_installed = importlib.util.find_spec('tensorrt') is not None\n"
        "plugin_installed = trt_installed and importlib.util.find_spec('tensorrt.plugin') is not None\n"
        "if plugin_installed:\n"
        "    import tensorrt\n"                                        # 5: checked through two names
        "use_trt = True\n"
        "if use_trt:\n"
        "    import pycuda.driver\n"                                   # 8: a plain flag checks nothing
    )
    found = optional_by_line(code)
    assert found[5] == (False, True)
    assert found[8] == (False, False)


def test_an_except_import_error_fallback_to_a_cuda_module_is_guarded_at_its_uses():
    code = (
        "try:\n"
        "    from triton.language.extra.libdevice import tanh\n"
        "except ModuleNotFoundError:\n"
        "    from triton.language.extra.cuda.libdevice import tanh\n"     # 4: the fallback
        "def f(x):\n"
        "    return tanh(x)\n"                                             # 6
        "from triton.language.extra.cuda.libdevice import fast_expf\n"     # 7: no alternative
        "def g(x):\n"
        "    return fast_expf(x)\n"                                        # 9
    )
    found = guarded_by_line(code)
    assert found.get(4, True) is True and found[6] is True
    assert found[9] is False


def test_a_cuda_toolkit_variable_s_presence_guards_its_branch():
    """`"CUDA_PATH" in os.environ` is false on a ROCm machine (no CUDA toolkit sets it): the branch is CUDA's and
    the test itself is no hazard; reading the variable unguarded still is."""
    code = (
        "import os\n"
        'if "CUDA_PATH" in os.environ:\n'
        '    os.add_dll_directory(os.path.join(os.environ["CUDA_PATH"], "bin"))\n'
        'if os.getenv("CUDA_HOME"):\n'
        '    nvcc = os.environ["CUDA_HOME"] + "/bin/nvcc"\n'
        'if "CUDA_HOME" not in os.environ:\n'
        '    print("no CUDA toolkit")\n'
        "else:\n"
        '    include = os.environ["CUDA_HOME"] + "/include"\n'
        'root = os.environ["CUDA_HOME"]\n'
    )
    found = guarded_by_line(code)
    assert 2 not in found and found[3] is True and found[5] is True and found[9] is True
    assert found[10] is False
