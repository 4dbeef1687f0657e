"""The ROCm/CUDA switches of rules/guards.toml: every section and key checked at load (a misspelt key is an error
naming it, not a regex that silently never matches), and the build readers' sections as typed, compiled values."""
from __future__ import annotations

import importlib.resources
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from auditor.util.errors import ToolError

# each key a reader reads, with its type: names (a list of strings), regex (a pattern that compiles), regexes (a
# list of them), values (a table of integers), gpus (a list of {arch, capability})
SWITCH_KEYS: dict[str, dict[str, str]] = {
    "preprocessor": {"rocm_defined": "names", "rocm_version_macros": "names", "cuda_only_defined": "names",
                     "rocm_values": "values", "hipify_kept_macros": "names"},
    "python": {"rocm_true_names": "names", "rocm_true_pattern": "regex", "cuda_only_names": "names",
               "cuda_only_call_pattern": "regex", "cuda_only_env": "names", "build_rocm_true_pattern": "regex",
               "build_rocm_call_pattern": "regex", "build_cuda_only_pattern": "regex", "build_rocm_values": "names",
               "build_cuda_values": "names", "rocm_version_words": "names", "cuda_version_words": "names"},
    "persona": {"true_calls": "names", "gpus": "gpus", "capability_calls": "names", "properties_calls": "names",
                "nvidia_arch_text": "regex", "nvidia_only_from": "values", "command_line": "names"},
    "build": {"rocm_condition_pattern": "regex", "rocm_value_pattern": "regex", "make_true_value_pattern": "regex"},
    "cmake": {"cuda_option_pattern": "regex", "other_backend_pattern": "regex",
              "hip_evidence_pattern": "regex", "hip_evidence_ranks": "regexes", "hip_language_pattern": "regex",
              "rocm_option_name_pattern": "regex", "rocm_compare_pattern": "regex", "cuda_compile_pattern": "regex"},
    "make": {"cuda_compile_pattern": "regex", "rocm_compile_pattern": "regex"},
    "markers": {"rocm_build_file_pattern": "regex", "rocm_ci_pattern": "regex", "rocm_runner_pattern": "regex",
                "rocm_agent_pattern": "regex", "rocm_dispatch_pattern": "regex", "rocm_dispatch_words": "names",
                "setup_rocm_pattern": "regex", "setup_strong_pattern": "regex",
                "setup_cuda_configuration_pattern": "regex", "hip_macro_prefix": "names"},
}
# sections only the shipped file's readers use: every key is required (a reader has no default to fall back on)
REQUIRED = ("build", "cmake", "make", "markers")


class SwitchError(ToolError, ValueError):
    """rules/guards.toml names a section or key no reader reads, or a value of the wrong type."""


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _gpus(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(g, dict) and set(g) == {"arch", "capability"} and isinstance(g["arch"], str)
        and isinstance(g["capability"], list) and len(g["capability"]) == 2
        and all(type(n) is int for n in g["capability"]) for g in value)


def _check_regex(value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise SwitchError(f"{where}: a regular expression")
    try:
        re.compile(value)
    except re.error as err:
        raise SwitchError(f"{where}: {err}") from None


def check_switches(data: dict[str, Any], label: str) -> None:
    """SwitchError naming the section and key of the first thing wrong."""
    for section, table in data.items():
        known = SWITCH_KEYS.get(section)
        if known is None or not isinstance(table, dict):
            raise SwitchError(f"{label}: unknown section [{section}] (known: {', '.join(SWITCH_KEYS)})")
        for key, value in table.items():
            kind = known.get(key)
            where = f"{label}: [{section}] {key}"
            if kind is None:
                raise SwitchError(f"{where}: unknown key (known: {', '.join(known)})")
            if kind == "names" and not _names(value):
                raise SwitchError(f"{where}: a list of names")
            if kind == "values" and not (isinstance(value, dict) and all(isinstance(v, int) for v in value.values())):
                raise SwitchError(f"{where}: a table of integers")
            if kind == "regex":
                _check_regex(value, where)
            if kind == "gpus" and not _gpus(value):
                raise SwitchError(f"{where}: a list of {{arch = name, capability = [major, minor]}}")
            if kind == "regexes":
                if not _names(value):
                    raise SwitchError(f"{where}: a list of regular expressions")
                for item in value:
                    _check_regex(item, where)
    for section in REQUIRED:
        missing = [key for key in SWITCH_KEYS[section] if key not in data.get(section, {})]
        if missing:
            raise SwitchError(f"{label}: [{section}] is missing {', '.join(missing)}")


@dataclass(frozen=True)
class BuildTests:
    """[build]: the text rules' reading of CMake `if()` and Makefile `ifeq/ifdef` tests."""

    rocm_condition: str = "(?!)"      # a test true on a ROCm build
    rocm_value: str = "(?!)"          # a STREQUAL value that makes a test a ROCm one
    make_true_value: str = "(?!)"     # `ifeq ($(USE_ROCM),<value>)` values that turn the switch on

    @classmethod
    def of(cls, section: dict[str, Any]) -> "BuildTests":
        return cls(*(str(section.get(key, "(?!)"))
                     for key in ("rocm_condition_pattern", "rocm_value_pattern", "make_true_value_pattern")))

    def as_data(self) -> dict[str, str]:
        return {"rocm_condition_pattern": self.rocm_condition, "rocm_value_pattern": self.rocm_value,
                "make_true_value_pattern": self.make_true_value}


@dataclass(frozen=True)
class CMakeSwitches:
    rocm_option: re.Pattern[str]          # [build]'s ROCm test: the text rules and this reader read one pattern
    cuda_option: re.Pattern[str]
    other_backend: re.Pattern[str]
    hip_evidence: re.Pattern[str]
    hip_evidence_ranks: tuple[re.Pattern[str], ...]
    hip_language: re.Pattern[str]
    rocm_option_name: re.Pattern[str]
    rocm_compare: re.Pattern[str]
    cuda_compile: re.Pattern[str]


@dataclass(frozen=True)
class MakeSwitches:
    cuda_compile: re.Pattern[str]
    rocm_compile: re.Pattern[str]


@dataclass(frozen=True)
class Markers:
    rocm_build_file: re.Pattern[str]
    rocm_ci: re.Pattern[str]
    rocm_runner: re.Pattern[str]
    rocm_agent: re.Pattern[str]
    rocm_dispatch: re.Pattern[str]
    rocm_dispatch_words: tuple[str, ...]
    setup_rocm: re.Pattern[str]
    setup_strong: re.Pattern[str]
    setup_cuda_configuration: re.Pattern[str]
    hip_macro_prefix: tuple[str, ...]


@dataclass(frozen=True)
class Switches:
    """The build readers' sections, compiled."""

    build: BuildTests
    cmake: CMakeSwitches
    make: MakeSwitches
    markers: Markers
    hipify_kept: tuple[str, ...] = ()     # [preprocessor] hipify_kept_macros: tests HIPIFY leaves false on ROCm

    @classmethod
    def of(cls, data: dict[str, Any], label: str = "guards.toml") -> "Switches":
        check_switches(data, label)
        cmake = {**data["cmake"], "rocm_option_pattern": data["build"]["rocm_condition_pattern"]}
        return cls(BuildTests.of(data["build"]), _compiled(CMakeSwitches, "cmake", {**data, "cmake": cmake}),
                   _compiled(MakeSwitches, "make", data), _compiled(Markers, "markers", data),
                   tuple(data.get("preprocessor", {}).get("hipify_kept_macros", ())))


def _compiled(kind: type, section: str, data: dict[str, Any]) -> Any:
    """A section as its dataclass: `x_pattern` keys compiled into field `x`, lists as tuples (of patterns, for a
    list of regexes)."""
    values: dict[str, Any] = {}
    for key, value in data[section].items():
        kind_of = SWITCH_KEYS[section].get(key, "regex")
        name = key.removesuffix("_pattern")
        if kind_of == "regex":
            values[name] = re.compile(value)
        elif kind_of == "regexes":
            values[name] = tuple(re.compile(v) for v in value)
        else:
            values[name] = tuple(value)
    return kind(**values)


def read_table(text: str, label: str = "guards.toml") -> dict[str, Any]:
    """A guards.toml's text, parsed and checked."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SwitchError(f"{label}: {err}") from None
    check_switches(data, label)
    return data


def shipped_table() -> dict[str, Any]:
    """The shipped rules/guards.toml, parsed and checked."""
    path = importlib.resources.files("auditor.rules") / "guards.toml"
    return read_table(path.read_text(encoding="utf-8"))


@cache
def shipped() -> Switches:
    """The shipped file's build-reader switches, compiled once per process."""
    return Switches.of(shipped_table())
