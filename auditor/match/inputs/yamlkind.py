"""Which YAML files are Kubernetes or Helm manifests: decided from a bounded read of the text, never by
loading it (Helm templates are not even valid YAML, and the scanned tree is untrusted)."""
from __future__ import annotations

import re
from pathlib import Path

SNIFF_BYTES = 64 * 1024
# top-level keys of a Kubernetes object (Helm templates may open with `{{- if … }}` lines first)
API_VERSION = re.compile(r"^apiVersion:[ \t]*\S", re.MULTILINE)
OBJECT_KIND = re.compile(r"^kind:[ \t]*\S", re.MULTILINE)
HELM_CHART = "Chart.yaml"


def yaml_kind(path: Path) -> str | None:
    """"k8s" for a Kubernetes manifest or a file of a Helm chart (its templates and values), else None."""
    if not path.is_file():    # never open a FIFO or a device named like a YAML file
        return None
    if _in_helm_chart(path):
        return "k8s"
    try:
        with path.open("rb") as handle:
            head = handle.read(SNIFF_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    return "k8s" if looks_like_k8s(head) else None


def looks_like_k8s(text: str) -> bool:
    head = text[:SNIFF_BYTES]
    return bool(API_VERSION.search(head) and OBJECT_KIND.search(head))


def _in_helm_chart(path: Path) -> bool:
    """values*.yaml beside Chart.yaml, or a file under the chart's templates/ directory."""
    parent = path.parent
    if path.name.startswith("values") and (parent / HELM_CHART).is_file():
        return True
    for directory in (parent, parent.parent):
        if directory.name == "templates" and (directory.parent / HELM_CHART).is_file():
            return True
    return False
