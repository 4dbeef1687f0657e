"""Read declared dependencies and package index URLs out of manifests, without executing anything."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import PurePosixPath

from auditor.util.errors import ScannedFileError
from auditor.parse.declared import Declared
from auditor.util.tomltext import load_toml

URL_OPTION = re.compile(r"^\s*(?:--index-url|--extra-index-url|-i|--find-links|-f)(?:\s+|=)(\S+)")
INCLUDE_OPTION = re.compile(r"^\s*(?:-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)")
PIP_INSTALL = re.compile(
    r"\b(?P<tool>pip3?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip|conda|mamba|micromamba)\s+install\b(?P<args>.*)"
)


class ManifestError(ScannedFileError):
    pass


@dataclass(frozen=True, slots=True)
class ManifestContent:
    declared: tuple[Declared, ...] = ()
    urls: tuple[tuple[str, int | None], ...] = ()
    includes: tuple[tuple[str, int], ...] = ()   # (relative path as written, line)
    rocm_build: bool = False


def requirements_txt(text: str) -> ManifestContent:
    declared: list[Declared] = []
    urls: list[tuple[str, int | None]] = []
    includes: list[tuple[str, int]] = []
    for number, joined, _owners in _joined_lines(text):
        line = joined.strip()
        if not line:
            continue
        if m := URL_OPTION.match(line):
            urls.append((m.group(1), number))
            continue
        if m := INCLUDE_OPTION.match(line):
            includes.append((m.group(1), number))
            continue
        if line.startswith("-e "):
            line = line[3:]
        elif line.startswith("-"):
            continue
        requirement = re.split(r"\s--?[a-z]", line, maxsplit=1)[0]  # drop per-line options (--hash)
        declared.append(Declared(requirement, number))
    return ManifestContent(tuple(declared), tuple(urls), tuple(includes))


def _joined_lines(text: str):
    """Lines with `#` comments removed and backslash continuations joined:
    (first physical line, joined text, physical line of each character of it)."""
    pieces: list[str] = []
    owners: list[int] = []
    first = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if not pieces:
            first = number
        continued = line.rstrip().endswith("\\")
        if continued:
            line = line.rstrip()[:-1] + " "
        pieces.append(line)
        owners.extend([number] * len(line))
        if not continued:
            yield first, "".join(pieces), owners
            pieces, owners = [], []
    if pieces:
        yield first, "".join(pieces), owners


PIP_VALUE_OPTIONS = {"-r", "-c", "--requirement", "--constraint", "-t", "--target", "--prefix", "--root",
                     "--platform", "--python-version", "--cache-dir", "-e", "--editable"}
INDEX_OPTIONS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}


def pip_install_commands(text: str) -> ManifestContent:
    """`pip install …` and `conda install …` in Dockerfiles, shell scripts and CI steps, as requirements."""
    declared: list[Declared] = []
    urls: list[tuple[str, int | None]] = []
    for _first, joined, owners in _joined_lines(text):
        for segment in re.finditer(r"[^;&|]+", joined):
            m = PIP_INSTALL.search(segment.group(0))
            if not m:
                continue
            conda = m.group("tool") in ("conda", "mamba", "micromamba")
            pending: str | None = None   # the option whose value comes next
            base = segment.start() + m.start("args")
            for word_match in re.finditer(r"\S+", m.group("args")):
                word = word_match.group(0).strip("'\"")
                line = owners[min(base + word_match.start(), len(owners) - 1)] if owners else None
                if pending is not None:
                    if pending in ("-c", "--channel") and conda:
                        urls.append((f"conda channel {word}", line))
                    elif pending in INDEX_OPTIONS and url_like(word):
                        urls.append((word, line))
                    pending = None
                    continue
                if (conda and word in ("-c", "--channel")) or word in INDEX_OPTIONS or word in PIP_VALUE_OPTIONS:
                    pending = word
                    continue
                if m2 := re.match(r"--(?:extra-)?index-url=(\S+)", word):
                    urls.append((m2.group(1), line))
                    continue
                if word.startswith("-") or word in (".", "..") or "$" in word or word.endswith((".txt", ".whl")):
                    continue
                if conda and "::" in word:
                    urls.append((f"conda channel {word.split('::', 1)[0]}", line))
                declared.append(Declared(word, line, where="conda install" if conda else ""))
    return ManifestContent(tuple(declared), tuple(urls))


def url_like(text: str) -> bool:
    return "://" in text


def _line_of(text: str, needle: str, default: int | None = None) -> int | None:
    """Where a string from a parsed structure was written (TOML and YAML parsers give no positions)."""
    for quoted in (f'"{needle}"', f"'{needle}'", needle):
        index = text.find(quoted)
        if index >= 0:
            return text.count("\n", 0, index) + 1
    return default


def _item_line(text: str, item: str) -> int | None:
    """The line of the YAML list entry `- item` (a substring search finds `cuda` in `- pytorch-cuda` first)."""
    m = re.search(rf"(?m)^[ \t]*-[ \t]*[\"']?{re.escape(item)}[\"']?[ \t]*(?:#.*)?$", text)
    return text.count("\n", 0, m.start()) + 1 if m else _line_of(text, item)


def _key_line(text: str, key: str) -> int | None:
    m = re.search(rf"(?m)^[ \t]*[\"']?{re.escape(key)}[\"']?[ \t]*=", text)   # [ \t]: linear on blank lines
    return text.count("\n", 0, m.start()) + 1 if m else None


def pyproject_toml(text: str) -> ManifestContent:
    data = _toml(text)
    declared: list[Declared] = []
    urls: list[tuple[str, int | None]] = []

    def add(items, optional=False, where=""):
        for item in items if isinstance(items, list) else []:
            if isinstance(item, str):
                declared.append(Declared(item, _line_of(text, item), optional, where))

    project = data.get("project", {})
    add(project.get("dependencies", []))
    for extra, items in (project.get("optional-dependencies") or {}).items():
        add(items, True, f"extra '{extra}'")
    add(data.get("build-system", {}).get("requires", []), where="build-system requires")
    for group, items in (data.get("dependency-groups") or {}).items():
        add(items, True, f"dependency group '{group}'")
    poetry = data.get("tool", {}).get("poetry", {})
    _poetry_deps(text, poetry.get("dependencies", {}), declared, optional=False, where="")
    for group, body in (poetry.get("group") or {}).items():
        _poetry_deps(text, body.get("dependencies", {}), declared, optional=True, where=f"group '{group}'")
    for source in poetry.get("source", []) or []:
        if isinstance(source, dict) and isinstance(source.get("url"), str):
            urls.append((source["url"], _line_of(text, source["url"])))
    uv = data.get("tool", {}).get("uv", {})
    sources = uv.get("sources") if isinstance(uv.get("sources"), dict) else {}
    named = {str(spec.get("index")) for spec in sources.values() if isinstance(spec, dict)}
    for index in uv.get("index", []) or []:
        if isinstance(index, dict) and index.get("explicit") is True and index.get("name") not in named:
            continue   # an explicit index serves only the packages a [tool.uv.sources] entry pins to it
        if isinstance(index, dict) and isinstance(index.get("url"), str):
            urls.append((index["url"], _line_of(text, index["url"])))
    for url in [uv.get("index-url")] + list(uv.get("extra-index-url", []) or []):
        if isinstance(url, str):
            urls.append((url, _line_of(text, url)))
    return ManifestContent(tuple(declared), tuple(urls))


def _poetry_deps(text: str, deps: dict, out: list[Declared], optional: bool, where: str) -> None:
    for name, spec in deps.items() if isinstance(deps, dict) else ():
        if name.lower() == "python":
            continue
        version = ""
        is_optional = optional
        extras: list[str] = []
        if isinstance(spec, str):
            version = spec
        elif isinstance(spec, dict):
            version = str(spec.get("version", ""))
            is_optional = optional or bool(spec.get("optional"))
            extras = [e for e in spec.get("extras", []) if isinstance(e, str)]
        pin = _poetry_pin(version)
        extra_text = f"[{','.join(extras)}]" if extras else ""
        out.append(Declared(f"{name}{extra_text}{pin}", _key_line(text, name), is_optional, where))


def _poetry_pin(version: str) -> str:
    version = version.strip()
    if not version or version == "*":
        return ""
    if version[0].isdigit():
        return f"=={version}"
    if version.startswith("^"):
        return f">={version[1:]}"
    return version if version[0] in "<>=!~" else ""


def pipfile(text: str) -> ManifestContent:
    data = _toml(text)
    declared: list[Declared] = []
    for section, optional in (("packages", False), ("dev-packages", True)):
        _poetry_deps(text, data.get(section, {}), declared, optional, "dev-packages" if optional else "")
    urls = [
        (s["url"], _line_of(text, s["url"]))
        for s in data.get("source", []) or []
        if isinstance(s, dict) and isinstance(s.get("url"), str)
    ]
    return ManifestContent(tuple(declared), tuple(urls))


def setup_cfg(text: str) -> ManifestContent:
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error as err:
        raise ManifestError(f"cannot read setup.cfg: {err}".splitlines()[0]) from None
    declared: list[Declared] = []

    def add(value: str, optional: bool, where: str):
        for line in value.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                declared.append(Declared(line, _line_of(text, line), optional, where))

    if parser.has_option("options", "install_requires"):
        add(parser.get("options", "install_requires"), False, "")
    if parser.has_option("options", "setup_requires"):
        add(parser.get("options", "setup_requires"), False, "setup_requires")
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            add(value, True, f"extra '{extra}'")
    return ManifestContent(tuple(declared))


def environment_yml(text: str) -> ManifestContent:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ManifestError(f"invalid YAML: {str(err).splitlines()[0]}") from None
    if not isinstance(data, dict):
        return ManifestContent()
    declared: list[Declared] = []
    urls: list[tuple[str, int | None]] = []
    for item in data.get("dependencies") or []:
        if isinstance(item, str):
            declared.append(Declared(item, _item_line(text, item), where="conda dependencies"))
        elif isinstance(item, dict) and isinstance(item.get("pip"), list):
            for pip_item in item["pip"]:
                if not isinstance(pip_item, str):
                    continue
                if m := URL_OPTION.match(pip_item):
                    urls.append((m.group(1), _item_line(text, pip_item)))
                elif not pip_item.startswith("-"):
                    declared.append(Declared(pip_item, _item_line(text, pip_item), where="pip section"))
    for channel in data.get("channels") or []:
        if isinstance(channel, str):
            urls.append((f"conda channel {channel}", _item_line(text, channel)))
    return ManifestContent(tuple(declared), tuple(urls))


def _toml(text: str) -> dict:
    try:
        return load_toml(text)
    except tomllib.TOMLDecodeError as err:
        raise ManifestError(f"invalid TOML: {err}") from None


READERS = {
    "requirements": requirements_txt,
    "pyproject": pyproject_toml,
    "pipfile": pipfile,
    "setup.cfg": setup_cfg,
    "environment": environment_yml,
}


def manifest_flavour(path: str) -> str | None:
    name = PurePosixPath(path).name.lower()
    parent = PurePosixPath(path).parent.name.lower()
    if name == "pyproject.toml" or re.match(r"pyproject[-_][\w-]+\.toml$", name):   # pyproject_hip.toml variants
        return "pyproject"
    if name == "pipfile":
        return "pipfile"
    if name == "setup.cfg":
        return "setup.cfg"
    if name.startswith("environment") and name.endswith((".yml", ".yaml")):
        return "environment"
    if name.endswith((".txt", ".in")) and (
        name.startswith(("requirements", "constraints")) or parent in ("requirements", "requirements-dev")
    ):
        return "requirements"
    return None


def resolve_include(base: str, target: str) -> str:
    """A `-r` target relative to the including file, as a root-relative posix path."""
    joined = PurePosixPath(base).parent / target
    parts: list[str] = []
    for part in joined.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return "/".join(parts)
