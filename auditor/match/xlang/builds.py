"""The extensions a Python build script declares, read as text: `CUDAExtension(name="pkg._C", sources=[…])`.
A registration block written `PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)` gets its module name from here: the
extension whose sources name its file."""
from __future__ import annotations

import re
from dataclasses import dataclass

DECLARATION = re.compile(r"\b(?:CUDAExtension|CppExtension|Extension|SyclExtension)\s*\(")
NAME = re.compile(r"""^\s*(?:name\s*=\s*)?["']([A-Za-z_][\w.]{0,200})["']""")
SOURCE = re.compile(r"""["']([^"'\n]{1,300}\.(?:cu|cpp|cc|cxx|c))["']""")
MAX_SPAN = 20_000     # characters of one declaration read: a build script's call, not the rest of the file


@dataclass(frozen=True, slots=True)
class Extension:
    name: str                      # the import name, `pkg._C`
    sources: tuple[str, ...]       # the source paths its call names, as written


def declared_extensions(text: str) -> tuple[Extension, ...]:
    if "Extension" not in text:
        return ()
    out = []
    for m in DECLARATION.finditer(text):
        span = _call_text(text, m.end())
        name = NAME.match(span)
        if name:
            out.append(Extension(name.group(1), tuple(dict.fromkeys(SOURCE.findall(span)))))
    return tuple(out)


def _call_text(text: str, start: int) -> str:
    """The arguments of the call opened just before `start`, up to its closing parenthesis (bounded)."""
    depth = 1
    end = min(len(text), start + MAX_SPAN)
    for i in range(start, end):
        char = text[i]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return text[start:end]


def names_file(source: str, path: str, script_dir: str) -> bool:
    """Whether a source path as a build script writes it (`csrc/x.cpp`, `./apex/csrc/x.cpp`, `os.path.join(…)`'s
    last literal) is the scanned file `path`."""
    written = source.lstrip("./")
    if not written:
        return False
    joined = f"{script_dir}/{written}" if script_dir not in ("", ".") else written
    return path in (written, joined) or path.endswith("/" + written)
