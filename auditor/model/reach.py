"""One line's reach on the default ROCm install: the facts the model knows about it, each a step of one layer
(shipped, built, imported, called, branch taken, mapped) with its answer, evidence and confidence."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from auditor.model.facts import FACTS, Layer


class Confidence(StrEnum):
    HIGH = "high"         # read from the tree's own files (its packaging, its paths, the scan's guards)
    MEDIUM = "medium"     # from the ROCm path the build readers found
    LOW = "low"           # from a ROCm path that uses what ROCm 6 removed (stale HIP): not proof that it works


@dataclass(frozen=True, slots=True)
class Step:
    """One fact about a line. `reached`: False when the default ROCm install does not reach the line this way
    (not shipped, not built, never imported, not called, branch not taken), True when it does (built by the ROCm
    build, a name mapped for it), None when it does only on an opt-in (an op compiled on first use)."""

    fact: str                   # a name of auditor/model/facts.FACTS
    reached: bool | None
    note: str = ""              # what the report says when this fact decides the disposition
    evidence: str = ""          # path:line that shows it, when one line does
    confidence: Confidence = Confidence.HIGH

    @property
    def layer(self) -> Layer:
        return FACTS[self.fact].layer

    def as_dict(self) -> dict:
        return {"fact": self.fact, "layer": str(self.layer), "reached": self.reached, "note": self.note,
                "evidence": self.evidence, "confidence": str(self.confidence)}


@dataclass(frozen=True, slots=True)
class Reach:
    """What the model knows about `path:line` (line None: the whole file), in the component that owns it."""

    path: str
    line: int | None
    component: str
    steps: tuple[Step, ...] = ()

    @property
    def facts(self) -> frozenset[str]:
        return frozenset(s.fact for s in self.steps)

    def step(self, fact: str) -> Step | None:
        return next((s for s in self.steps if s.fact == fact), None)

    def answer(self, layer: Layer) -> bool | None:
        """False when a fact of the layer says the install does not reach the line, True when one says it does,
        None when the model knows nothing of that layer here."""
        found = [s.reached for s in self.steps if s.layer == layer and s.reached is not None]
        return None if not found else all(found)

    def with_steps(self, steps: tuple[Step, ...]) -> "Reach":
        return Reach(self.path, self.line, self.component, self.steps + steps) if steps else self

    @property
    def confidence(self) -> Confidence:
        """The lowest confidence of its steps (high when it has none)."""
        order = list(Confidence)
        return max((s.confidence for s in self.steps), key=order.index, default=Confidence.HIGH)

    def as_dict(self) -> dict:
        return {"path": self.path, "line": self.line, "component": self.component,
                "layers": {str(layer): self.answer(layer) for layer in Layer},
                "confidence": str(self.confidence), "steps": [s.as_dict() for s in self.steps]}
