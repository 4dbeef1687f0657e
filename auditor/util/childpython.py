"""The command line of a Python child that runs one of rocm-audit's own modules, from this installation only.

`python -m auditor.x` puts the current directory first on the child's sys.path, so a user standing in a
checkout that holds an `auditor/` package would run that package. The child starts isolated instead (`-I`: no
current directory, no PYTHON* variables, no user site directory), is given this process's absolute sys.path
entries, and refuses to start when `auditor` would be found anywhere but where this process found it."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

REFUSED = 3   # the child's exit status when its `auditor` is not this process's

# Runs in the child as `python -I -c BOOT PATHS PACKAGE MODULE ARGS...`; only the standard library is imported
# before the path check.
BOOT = """\
import importlib.util, json, os, runpy, sys
sys.path[:] = json.loads(sys.argv[1])
package, module = sys.argv[2], sys.argv[3]
del sys.argv[1:4]
spec = importlib.util.find_spec("auditor")
found = os.path.realpath(os.path.dirname(spec.origin)) if spec and spec.origin else None
if found != package:
    sys.stderr.write(f"rocm-audit: refusing to run {found}: this installation is {package}\\n")
    sys.exit(%d)
runpy.run_module(module, run_name="__main__", alter_sys=True)
""" % REFUSED


def installed_package() -> str:
    """The directory this process imported `auditor` from."""
    import auditor

    return os.path.realpath(Path(auditor.__file__).parent)


def module_command(module: str, *args: str) -> list[str]:
    """`python -m MODULE ARGS...` (MODULE one of `auditor`'s), as a child that cannot import another `auditor`."""
    if module != "auditor" and not module.startswith("auditor."):
        raise ValueError(f"{module} is not one of rocm-audit's modules")
    paths = [entry for entry in sys.path if entry and os.path.isabs(entry)]
    return [sys.executable, "-I", "-c", BOOT, json.dumps(paths), installed_package(), module, *args]
