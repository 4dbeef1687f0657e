"""Paths named on the command line stay in the scanned tree: a committed symlink that `git diff --name-only | xargs
rocm-audit check` (or `fix`) names is not followed out of the tree, and nothing of the file it points to reaches
the report."""
from __future__ import annotations

import json
import os

from auditor.cli.app import main
from tests.conftest import write_tree

SENTINEL = "SENTINEL_OUTSIDE_7f3a"


def _tree_with_link_out(tmp_path):
    outside = write_tree(tmp_path / "outside", {"secret.py": f"import tensorrt_llm  # {SENTINEL}\n"})
    repo = write_tree(tmp_path / "repo", {"a.py": "import torch\n"})
    (repo / "evil.py").symlink_to(outside / "secret.py")
    (repo / "inside.py").symlink_to(repo / "a.py")
    return repo


def test_a_named_link_out_of_the_tree_is_refused_by_check(tmp_path, capsys, monkeypatch):
    repo = _tree_with_link_out(tmp_path)
    monkeypatch.chdir(repo)
    code = main(["check", "a.py", "evil.py", "inside.py", "--format", "json", "--no-progress"])
    out, err = capsys.readouterr()
    assert SENTINEL not in out + err and "secret" not in out + err and "Traceback" not in out + err
    report = json.loads(out)
    assert report["root"] in (".", str(repo.resolve()))     # the tree did not widen to the link's target
    assert not any(f["rule"] == "RA001" or "tensorrt" in json.dumps(f) for f in report["findings"])
    assert ["evil.py", "not read: a symbolic link leads out of the scanned tree"] in \
        [[e["path"], e["message"]] for e in report["errors"]]
    assert code in (0, 1)    # a report (the gate decides on the refused file), not a tool error
    assert not any(e["path"] == "inside.py" for e in report["errors"])   # a link inside the tree is fine


def test_a_named_link_out_of_the_tree_is_refused_by_fix(tmp_path, capsys, monkeypatch):
    outside = write_tree(tmp_path / "outside", {"k.cu": "#include <cuda_runtime.h>\nint x = __shfl_sync(0xffffffff, 1, 2);\n"})
    repo = write_tree(tmp_path / "repo", {"a.py": "import torch\n"})
    (repo / "k.cu").symlink_to(outside / "k.cu")
    before = (outside / "k.cu").read_bytes()
    monkeypatch.chdir(repo)
    main(["fix", "k.cu", "a.py"])
    out, err = capsys.readouterr()
    assert (outside / "k.cu").read_bytes() == before
    assert not [p for p in os.listdir(outside) if p != "k.cu"]
    assert "Traceback" not in out + err and "__shfl_sync" not in out + err
