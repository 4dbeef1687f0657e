"""Compare rocm-audit's HIPIFY coverage with hipify-perl's own `-examine` counts, per repository.

    .venv/bin/python scripts/hipify_agreement.py --hipify-perl PATH/TO/hipify-perl REPO [REPO ...]

hipify-perl is run (with `perl`, never from the scanned tree) on the C/C++/CUDA files rocm-audit's discovery
finds, once by default and, for files where that run leaves work, once with `-roc`. Its counts are corrected as
docs/hipify.md says, so both sides count the same thing:
  - a reference hipify-perl converts to the retired hipDNN wrapper counts as converted only when `-roc` maps it
    (to MIOpen); a warning for a name `-roc` maps counts as converted;
  - `*_sync` warp functions and `__activemask` count as supported (HIP 6.2 has them);
  - a warning for a name hipify-perl's tables do not list (a project's own cudaXxx macro) is dropped;
  - API references only: a warning for a name that sits on its line only in a comment, a string literal or inside
    a longer identifier is dropped (hipify-perl's rename counts, `=>`, carry no line and stay as they are).
A second hipify-perl column (+bf16) also counts as supported the bf16 names HIP has (amd_hip_bf16.h and HIPIFY's
newer tables: __bfloat1622float2, __nv_bfloat162 -> __hip_bfloat162) that hipify-perl 6.3's unsupported lists
still carry: the same kind of lag as the *_sync functions, kept apart because it is not among
the corrections.
It prints, per repository, the percentages and the difference in percentage points (against the strict column).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor.run.discover.files import discover  # noqa: E402
from auditor.match.hipify.apitable import shipped_table  # noqa: E402
from auditor.match.hipify.perl import read_maps  # noqa: E402

CONVERTED = re.compile(r"^  (\S+) => (\S*): (\d+)$")
WARNING = re.compile(r':(\d+): warning: (?:[^"]*"([^"]+)"|unsupported (?:ROCm )?HIP identifier: (\w+))')
NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
SUPPORTED_ANYWAY = re.compile(r"^__\w+_sync$|^__activemask$")


def code_lines(path: Path) -> list[str]:
    """The file's lines with comments and string literals blanked (line numbers kept)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text).split("\n")


def in_code(lines: list[str], number: int, name: str) -> bool:
    """Whether `name` is a whole identifier in the code of line `number`: hipify-perl also warns for names in
    comments and strings, and for a name inside a longer one (`nv_bfloat162` in `__nv_bfloat162`)."""
    line = lines[number - 1] if 0 < number <= len(lines) else ""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", line) is not None


def examine(perl: Path, path: Path, roc: bool) -> tuple[Counter, Counter]:
    """(converted name -> (target, count)), (warned name -> count, API references in code only) for one file."""
    args = ["perl", str(perl), "-examine", *(["-roc"] if roc else []), str(path)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    converted: Counter = Counter()
    warned: Counter = Counter()
    lines: list[str] | None = None     # read when a warning needs them
    for line in out.splitlines():
        m = CONVERTED.match(line)
        if m:
            converted[(m.group(1), m.group(2))] += int(m.group(3))
            continue
        m = WARNING.search(line)
        if m:
            name = m.group(2) or m.group(3)
            lines = lines if lines is not None else code_lines(path)
            if in_code(lines, int(m.group(1)), name):
                warned[name] += 1
    return converted, warned


def hip_bf16_names() -> frozenset[str]:
    """bf16 names the shipped table converts (HIP's bf16 header, HIPIFY's newer tables: __bfloat1622float2,
    __nv_bfloat162 -> __hip_bfloat162), which hipify-perl 6.3's unsupported lists still carry."""
    return frozenset(e.name for e in shipped_table().entries.values()
                     if e.converted and "bfloat16" in e.name.lower())


def corrected(perl: Path, path: Path, known: set[str], bf16: frozenset[str] = frozenset()) -> tuple[int, int, int]:
    """(converted, unconverted, of the unconverted: bf16 names HIP declares under the CUDA spelling)."""
    converted, warned = examine(perl, path, roc=False)
    roc_names: set[str] = set()
    if warned or any(target.lower().startswith("hipdnn") for _, target in converted):
        roc_converted, _ = examine(perl, path, roc=True)
        roc_names = {name for name, target in roc_converted if not target.lower().startswith("hipdnn")}
    good = bad = 0
    for (name, target), count in converted.items():
        if target.lower().startswith("hipdnn") and name not in roc_names:
            bad += count
        else:
            good += count
    lagging = 0
    for name, count in warned.items():
        if SUPPORTED_ANYWAY.match(name) or name in roc_names:
            good += count
        elif name in known:
            bad += count
            lagging += count if name in bf16 else 0
    return good, bad, lagging


def ours(repo: Path) -> tuple[int, int]:
    out = subprocess.run([sys.executable, "-m", "auditor", "coverage", str(repo), "--format", "json", "--no-cache"],
                         capture_output=True, text=True, check=True, cwd=REPO).stdout
    total = json.loads(out)["total"]
    return total["converted_refs"], total["unconverted_refs"]


def percent(good: int, bad: int) -> float:
    return round(100.0 * good / (good + bad), 1) if good + bad else 100.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hipify-perl", type=Path, required=True)
    parser.add_argument("repos", nargs="+", type=Path)
    args = parser.parse_args(argv)
    maps = read_maps(args.hipify_perl.read_text(encoding="utf-8", errors="replace"))
    known = set(maps.default) | set(maps.roc) | set(maps.unsupported) | maps.device
    bf16 = hip_bf16_names()
    print(f"{'repository':40} {'hipify-perl':>18} {'+bf16':>6} {'rocm-audit':>18} {'diff pp':>8} {'+bf16':>6}")
    for repo in args.repos:
        files = [f for f in discover([repo], repo.resolve()).files if f.kind in ("cuda", "cpp")]
        good = bad = lagging = 0
        for f in files:
            g, b, lag = corrected(args.hipify_perl, Path(f.abspath), known, bf16)
            good, bad, lagging = good + g, bad + b, lagging + lag
        mine = ours(repo)
        theirs_pct, ours_pct = percent(good, bad), percent(*mine)
        with_bf16 = percent(good + lagging, bad - lagging)
        print(f"{repo.name:40} {good:>6}/{good + bad:<6} {theirs_pct:>5} {with_bf16:>6} {mine[0]:>6}/{sum(mine):<6} "
              f"{ours_pct:>5} {ours_pct - theirs_pct:>+8.1f} {ours_pct - with_bf16:>+6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
