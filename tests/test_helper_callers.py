"""A rule with `callers = true` (RA504, nvidia-smi) reports the calls of a helper only when the helper hands the
command out; a helper that runs the command itself is the one place to change."""
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as

RULEBOOK = load_rulebook()


def nvidia_smi_lines(code: str) -> list[int]:
    result = scan_text_as("pkg/diagnostics.py", "python", code, RULEBOOK)
    assert result.error is None
    return sorted(f.span.line for f in result.findings if f.rule_id == "RA504")


def test_a_helper_that_runs_nvidia_smi_is_reported_once_at_the_command():
    # MinkowskiEngine's diagnostics.py: parse_nvidia_smi() runs the command and returns parsed text
    code = (
        "import subprocess\n"
        "def parse_nvidia_smi():\n"
        "    sp = subprocess.Popen(\n"
        "        ['nvidia-smi', '-q'], stdout=subprocess.PIPE)\n"
        "    out = dict()\n"
        "    for item in sp.communicate()[0].decode().split('\\n'):\n"
        "        out[item] = item\n"
        "    return out\n"
        "def print_diagnostics():\n"
        "    for k, v in parse_nvidia_smi().items():\n"
        "        print(k, v)\n"
    )
    assert nvidia_smi_lines(code) == [4]


def test_a_helper_whose_result_runs_elsewhere_is_reported_where_it_is_called():
    code = (
        "import subprocess\n"
        "def smi_command():\n"
        "    cmd = ['nvidia-smi', '--query-gpu=memory.used', '--format=csv']\n"
        "    return cmd\n"
        "def smi_binary():\n"
        "    return 'nvidia-smi'\n"
        "used = subprocess.check_output(smi_command())\n"
        "topo = subprocess.check_output([smi_binary(), 'topo', '-m'])\n"
    )
    assert nvidia_smi_lines(code) == [3, 6, 7, 8]


def test_a_line_with_the_helper_call_and_a_query_flag_is_one_site():
    # accelerate's environment.py: [_nvidia_smi(), "--query-gpu=count,name", ...] matched twice on one line
    code = (
        "import subprocess\n"
        "def _nvidia_smi():\n"
        "    return 'nvidia-smi'\n"
        "def get_gpu_info():\n"
        "    return subprocess.check_output([_nvidia_smi(), '--query-gpu=count,name', '--format=csv'])\n"
    )
    assert nvidia_smi_lines(code) == [3, 5]
