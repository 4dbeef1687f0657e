"""The ROCm-path patterns are an enum (auditor/model/rocmpath/model.RocmPattern) whose values are the ids the reports
and the shipped JSON schema show."""
from __future__ import annotations

import json
from importlib.resources import files

from auditor.model.rocmpath.model import BUILDS_ON_ROCM, PATTERN_NAMES, Evidence, RocmPath, RocmPattern


def test_the_schema_lists_the_enums_ids():
    schema = json.loads(files("auditor").joinpath("schema/report.schema.json").read_text())
    component = json.dumps(schema)
    ids = [p.value for p in RocmPattern]
    assert ids == [f"P{n}" for n in range(1, len(ids) + 1)]
    assert component.count(json.dumps({"enum": ids})) == 2       # `patterns` items and `evidence[].pattern`
    assert set(PATTERN_NAMES) == set(RocmPattern)


def test_a_pattern_renders_as_its_id():
    path = RocmPath("pkg", evidence=(Evidence(RocmPattern.HIP_SHIM, "csrc/hip_compat.h:1", "a shim"),
                                     Evidence(RocmPattern.BACKEND_SWITCH, "setup.py:4", "switches")))
    as_json = json.loads(json.dumps(path.as_dict()))
    assert as_json["patterns"] == ["P1", "P2"]
    assert as_json["evidence"][0] == {"pattern": "P2", "name": "same sources compiled as HIP through a shim header",
                                      "where": "csrc/hip_compat.h:1", "what": "a shim"}
    assert f"{RocmPattern.HIP_SHIM} {RocmPattern.HIP_SHIM.description}".startswith("P2 same sources")
    assert RocmPattern.PYTHON_DISPATCH not in BUILDS_ON_ROCM and RocmPattern.HIP_SHIM in BUILDS_ON_ROCM
