"""Generate rules/hipify/api_table.tsv, the HIPIFY API table, from named, versioned sources.

    .venv/bin/python scripts/build_api_table.py --hip-bindings DIR --torch-python PYTHON \
        [--cuda-include DIR] [--cudnn-include DIR] [--hip-include DIR] [-o FILE]
    .venv/bin/python scripts/build_api_table.py --from-table rules/hipify/api_table.tsv \
        --hipify-perl HIPIFY/bin/hipify-perl --hipify-docs HIPIFY/docs/tables --hip-headers CLR/hipamd/include

HIPIFY's own maps (hipify-perl's default and -roc targets) are laid over the table last; see
scripts/hipify_source.py for how they decide a name's status, target library and version.

Sources (each recorded with its version in the table's header):
  cuda        CUDA toolkit headers: runtime and driver API, device intrinsics, cooperative groups, CUB,
              NVTX (default: the include directory of the `nvcc` on PATH)
  cudnn       cuDNN headers (the `nvidia/cudnn/include` directory of the nvidia-cudnn-cu13 wheel; optional)
  hip         HIP API declarations of the rocm-bindings-hip package (its `rocm/bindings` directory)
  hip-device  HIP headers with the device functions, repeatable (optional): HIP 7.1's from the PyPI triton
              wheel (triton/backends/amd/include/hip: warp, sync and atomic functions), HIP 5.2's from Debian
              libamdhip64-dev (/usr/include/hip: the fp16 functions the triton subset lacks)
  torch       PyTorch's torch.utils.hipify.cuda_to_hip_mappings (run with --torch-python)

How a name gets its HIP spelling and status:
  1. PyTorch's mapping, when HIP declares the target (or the name belongs to a library whose HIP headers
     are not among the sources: cuBLAS, cuSPARSE, cuRAND, cuFFT, cuSOLVER, NVRTC, NVTX, CUB);
  2. otherwise the mechanical renames HIPIFY uses (cudaX -> hipX, cuX -> hipX / hipDrvX, CUx -> hipX_t,
     CU_X_Y -> HIP_X_Y / hipXY, CUDA_ERROR_X -> hipErrorX, cudaDevAttrX -> hipDeviceAttributeX), when
     HIP declares the result;
  3. device functions keep their names: supported when HIP's headers declare them, or when they come
     from a CUDA header that PyTorch maps to a HIP header (cuda_fp16.h, cuda_bf16.h: their types too;
     an approximation for cuda_bf16.h, whose HIP header is not among the sources: HIPIFY lists part of
     the bf16 conversions, e.g. __bfloat162int_rn, as unsupported);
  4. otherwise `unsupported`. CUDA-side lifecycle: `deprecated` (marked deprecated in the CUDA headers,
     HIP has it), `removed` (PyTorch still maps it but CUDA's headers no longer declare it).
Standard C math functions (expf, max, ...) are not CUDA names and are left out.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from auditor.match.hipify.apitable import ApiEntry, make_table, parse_table, render_table  # noqa: E402
from auditor.match.hipify.perl import read_maps  # noqa: E402

OUT = REPO / "rules" / "hipify" / "api_table.tsv"
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# Identifier prefixes that make a name a CUDA name (not a CUDA name: __cudart_*, CUDARTAPI, __CUDA_*).
CUDA_NAME = re.compile(
    r"^(?:cuda[A-Z]\w*|cu[A-Z][a-z]\w*|CU[a-z]\w*|CU_[A-Z0-9]\w*|CUDA_[A-Z0-9]\w*|cudnn[A-Z]\w*|CUDNN_[A-Z0-9]\w*"
    r"|nvtx[A-Z]\w*|NVTX_[A-Z0-9]\w*|__nv_(?:bfloat16|bfloat162|half|fp8)\w*|__NV_[A-Z0-9]\w*)$"
)
INTERNAL = re.compile(r"_pt(?:ds|sz)$|^CUDA_API_|^CUDA_CB$|^CUDART_CB$|_INTERNAL|^cudaRoundMode$|Internal"
                      r"|^CUDA_ENABLE|^CUDA_FORCE")
# Libraries whose HIP headers are not among the sources: PyTorch's mapping is the only word on them.
LIBRARY_PREFIX = re.compile(
    r"^(?P<lib>cublasLt|CUBLASLT|cublas|CUBLAS|cusparse|CUSPARSE|curand|CURAND|cufft|CUFFT|cusolver|CUSOLVER"
    r"|nvrtc|NVRTC|nvtx|NVTX|cub)(?:[A-Z_:]|$)"
)
LIBRARY_API = {"cublaslt": "blaslt", "cublas": "blas", "cusparse": "sparse", "curand": "rand", "cufft": "fft",
               "cusolver": "solver", "nvrtc": "rtc", "nvtx": "nvtx", "cub": "cub"}
DEVICE_HEADERS = (
    "crt/device_functions.h", "crt/device_double_functions.h", "crt/sm_70_rt.h", "crt/sm_80_rt.h",
    "crt/sm_90_rt.h", "sm_20_intrinsics.h", "sm_30_intrinsics.h", "sm_32_intrinsics.h", "sm_35_intrinsics.h",
    "sm_61_intrinsics.h", "sm_20_atomic_functions.h", "sm_32_atomic_functions.h", "sm_35_atomic_functions.h",
    "sm_60_atomic_functions.h", "device_atomic_functions.h", "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h",
    "cuda_bf16.hpp", "cuda_fp8.h", "cuda_fp8.hpp",
)
DEVICE_NAME = re.compile(r"^(?:__[a-z][a-z0-9_]*[a-z0-9]|atomic[A-Z]\w*)$")
DEVICE_NOT = re.compile(r"^__(?:nv|internal|cuda|builtin|has_|is_|isnan|isinf|finite|signbit|attribute|declspec"
                        r"|inline|forceinline|host|device|align|launch|noinline|restrict|global|shared|constant|managed|grid)"
                        r"|_impl$|^__h(?:half|bf)|_internal")
COOPERATIVE_NAME = re.compile(r"^(?:this_\w+|\w*_group|thread_block\w*|tiled_partition|labeled_partition"
                              r"|binary_partition|coalesced_threads|sync_warps)$")
# Host-API headers: their names are checked against the HIP API declarations, not trusted from PyTorch.
HOST_HEADERS = {"cuda.h", "cuda_runtime.h", "cuda_runtime_api.h", "driver_types.h", "library_types.h",
                "cuda_profiler_api.h", "channel_descriptor.h", "cuda_texture_types.h"}


def strip_comments(text: str) -> str:
    return COMMENTS.sub(" ", text)


def read(path: Path) -> str:
    return strip_comments(path.read_text(encoding="utf-8", errors="replace"))


# ----------------------------------------------------------------------------------------- sources

def find_cuda_include() -> Path:
    nvcc = shutil.which("nvcc")
    if not nvcc:
        sys.exit("nvcc is not on PATH: pass --cuda-include")
    done = subprocess.run([nvcc, "--dryrun", "-x", "cu", "-c", "/dev/null", "-o", "/dev/null"],
                          capture_output=True, text=True)
    m = re.search(r'INCLUDES="-I([^"]+)"', done.stdout + done.stderr)
    if not m:
        sys.exit("cannot find the CUDA include directory from nvcc: pass --cuda-include")
    return Path(m.group(1)).resolve()


def cuda_version(include: Path) -> str:
    number = int(re.search(r"#define\s+CUDA_VERSION\s+(\d+)", (include / "cuda.h").read_text()).group(1))
    root = next((p for p in include.parents if (p / "dist-info").is_dir()), include)
    packages = sorted(p.name.removesuffix(".dist-info") for p in (root / "dist-info").glob("*.dist-info")
                      if re.search(r"runtime|crt|cccl|nvtx|nvcc", p.name))   # the wheels whose headers are read
    packages = [re.sub(r"-(\d[\w.]*)$", r" \1", p.replace("_", "-")) for p in packages]
    wheels = f" (from NVIDIA's wheels: {', '.join(packages)})" if packages else ""
    return f"CUDA {number // 1000}.{number % 1000 // 10} headers{wheels}"


def cudnn_version(include: Path) -> str:
    text = (include / "cudnn_version.h").read_text()
    major, minor, patch = (re.search(rf"#define\s+CUDNN_{k}\s+(\d+)", text).group(1)
                           for k in ("MAJOR", "MINOR", "PATCHLEVEL"))
    wheel = sorted(include.parent.parent.parent.glob("nvidia_cudnn*.dist-info"))
    origin = wheel[0].name.removesuffix(".dist-info") if wheel else "the nvidia-cudnn-cu13 wheel's nvidia/cudnn/include"
    return f"cuDNN {major}.{minor}.{patch} headers ({origin})"


def hip_bindings(path: Path) -> tuple[set[str], str]:
    pxd = path / "cyhip.pxd"
    names = {n for n in IDENT.findall(pxd.read_text()) if n.startswith(("hip", "HIP", "__hip"))}
    meta = sorted(path.parent.parent.glob("rocm_bindings_hip-*.dist-info"))
    version = meta[0].name.removeprefix("rocm_bindings_hip-").removesuffix(".dist-info") if meta else "?"
    hip_major = version.split(".")[0] + "." + version.split(".")[1] if version != "?" else "?"
    return names, f"HIP {hip_major} API declarations (PyPI rocm-bindings-hip {version}, rocm/bindings/cyhip.pxd)"


def hip_headers(path: Path) -> tuple[set[str], set[str], str]:
    """(every identifier, identifiers declared or called as functions) in the HIP headers."""
    names: set[str] = set()
    functions: set[str] = set()
    for header in sorted(path.rglob("*.h")):
        if "nvidia_detail" in header.parts:
            continue
        text = read(header)
        names.update(IDENT.findall(text))
        functions.update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", text))
    version_h = (path / "hip_version.h").read_text()
    major, minor, patch = (re.search(rf"#define\s+HIP_VERSION_{k}\s+(\d+)", version_h).group(1)
                           for k in ("MAJOR", "MINOR", "PATCH"))
    wheel = sorted(path.parents[4].glob("triton-*.dist-info")) if len(path.parents) > 4 else []
    origin = (f"PyPI {wheel[0].name.removesuffix('.dist-info').replace('-', ' ')} wheel, "
              "triton/backends/amd/include/hip"
              if wheel else "Debian libamdhip64-dev" if "triton" not in path.parts else "PyPI triton wheel")
    return names, functions, f"HIP {major}.{minor}.{patch} headers, for device functions ({origin})"


def torch_mappings(python: str) -> tuple[dict[str, str], dict[str, str], str]:
    code = (
        "import json, torch, torch.utils.hipify.cuda_to_hip_mappings as m\n"
        "names = {}\n"
        "for table in (m.CUDA_TYPE_NAME_MAP, m.CUDA_IDENTIFIER_MAP, m.CUDA_SPECIAL_MAP):\n"
        "    names.update(table)\n"
        "print(json.dumps({'version': torch.__version__, 'names': names, 'includes': dict(m.CUDA_INCLUDE_MAP)}))\n"
    )
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    data = json.loads(done.stdout)
    names = {k.strip(): v.strip() for k, v in data["names"].items() if IDENT.fullmatch(k.strip())}
    if data["names"].get("cub::"):  # the namespace: `cub::` -> `hipcub::`
        names["cub"] = data["names"]["cub::"].rstrip(":")
    includes = {}
    for key, value in data["includes"].items():  # keys like 'include <cuda.h' or 'cuda_runtime.h'
        header = re.sub(r'^include\s*[<"]|[<>"]', "", key).strip()
        target = re.sub(r'^include\s*[<"]|[<>"]', "", value).strip()
        if header and "/" not in header[:1]:
            includes[header] = target
    return names, includes, f"PyTorch {data['version']} torch.utils.hipify.cuda_to_hip_mappings"


# ----------------------------------------------------------------------------------------- CUDA names

class _Evidence:
    """What the headers say about each name: defined as a macro, a type, or declared/called as a function."""

    def __init__(self) -> None:
        self.macros: set[str] = set()
        self.types: set[str] = set()
        self.functions: set[str] = set()

    def add(self, text: str) -> None:
        self.macros.update(re.findall(r"#\s*define\s+(\w+)", text))
        self.types.update(re.findall(r"typedef\b[^;{}]*?\b(\w+)\s*;", text))
        self.types.update(re.findall(r"\b(?:struct|enum|union|class)\s+(\w+)", text))
        self.functions.update(re.findall(r"\b(\w+)\s*\(", text))

    def kind(self, name: str) -> str:
        if name in self.types:
            return "type"
        if name in self.functions:
            return "function"
        return "macro" if name in self.macros else "enum"


def cuda_names(include: Path, cudnn: Path | None) -> tuple[dict[str, tuple[str, str, str]], set[str]]:
    """{name: (kind, api, header)} of the CUDA headers, and the names they mark deprecated."""
    found: dict[str, tuple[str, str]] = {}
    deprecated: set[str] = set()
    evidence = _Evidence()
    groups = [("runtime", include.glob("*.h")), ("driver", [include / "cuda.h", include / "cudaTypedefs.h"])]
    if cudnn:
        groups.append(("cudnn", cudnn.glob("cudnn*.h")))
    for api, headers in groups:
        for header in sorted(set(headers)):
            if header.name.startswith(("cupti", "nvperf", "generated_", "nvvm")):
                continue
            text = read(header)
            evidence.add(text)
            for name in sorted(set(IDENT.findall(text))):
                if not CUDA_NAME.match(name) or INTERNAL.search(name):
                    continue
                this_api = "driver" if api == "runtime" and re.match(r"^(?:cu[A-Z]|CU[a-z_])", name) else api
                if name.startswith(("nvtx", "NVTX_")):
                    this_api = "nvtx"
                found.setdefault(name, (this_api, header.name))
            deprecated.update(re.findall(
                r"(?:__CUDA_DEPRECATED|__CUDNN_DEPRECATED|CUDNN_DEPRECATED)[^;{(]*?\b(\w+)\s*\(", text))
    return {name: (evidence.kind(name), api, header) for name, (api, header) in found.items()}, deprecated


def device_names(include: Path) -> dict[str, str]:
    """{device function: the CUDA header that declares it}."""
    found: dict[str, str] = {}
    for relative in DEVICE_HEADERS:
        header = include / relative
        if not header.exists():
            continue
        text = read(header)
        for name in re.findall(r"\b([A-Za-z_]\w*)\s*\(", text):
            if DEVICE_NAME.match(name) and not DEVICE_NOT.search(name) and not name.endswith("__"):
                found.setdefault(name, relative.split("/")[-1].replace(".hpp", ".h"))
    return found


def cooperative_names(include: Path) -> set[str]:
    text = read(include / "cooperative_groups.h")
    names = set(re.findall(r"\b(?:class|struct)\s+(\w+)", text))
    names |= set(re.findall(r"_CG_(?:QUALIFIER|STATIC_QUALIFIER)\s+[\w:<>, ]+?\b(\w+)\s*\(", text))
    return {n for n in names if COOPERATIVE_NAME.match(n) and not n.endswith("_impl")}


def headers_of(include: Path, cudnn: Path | None) -> list[str]:
    names = [p.name for p in include.glob("*.h")] + [p.name for p in include.glob("*.hpp")]
    names += [f"cooperative_groups/{p.name}" for p in (include / "cooperative_groups").glob("*.h")]
    names += [f"cub/{p.relative_to(include / 'cccl' / 'cub').as_posix()}"
              for p in (include / "cccl" / "cub").rglob("*.cuh")] if (include / "cccl" / "cub").is_dir() else []
    names += [p.relative_to(include).as_posix() for p in (include / "nvtx3").glob("*.h")]
    if cudnn:
        names += [p.name for p in cudnn.glob("cudnn*.h")]
    skip = ("cupti", "nvperf", "generated_", "nvvm", "sm_", "crt", "host_", "common_functions")
    return sorted({n for n in names if not n.startswith(skip) and not n.endswith("_v9.h")})


# ----------------------------------------------------------------------------------------- HIP spelling

def _camel(words: str) -> str:
    return "".join(w.capitalize() for w in words.lower().split("_") if w)


def mechanical(name: str) -> list[str]:
    """The spellings HIPIFY's renames give, most likely first."""
    out: list[str] = []
    if name.startswith("cudaDevAttr"):
        out.append("hipDeviceAttribute" + name[len("cudaDevAttr"):])
    if name.startswith("cuda"):
        out.append("hip" + name[4:])
    elif re.match(r"^cu[A-Z]", name):
        out += ["hip" + name[2:], "hipDrv" + name[2:], "hipModule" + name[2:]]
    elif re.match(r"^CU[a-z]", name):
        stem = name[2:].removesuffix("_st").removesuffix("_enum")
        out += [f"hip{stem[0].upper()}{stem[1:]}_t", f"hip{stem[0].upper()}{stem[1:]}", f"HIP{stem}"]
    elif name.startswith("CU_"):
        rest = name[3:]
        out += [f"HIP_{rest}", f"hip{_camel(rest)}"]
        if rest.startswith("DEVICE_ATTRIBUTE_"):
            out.append("hipDeviceAttribute" + _camel(rest[len("DEVICE_ATTRIBUTE_"):]))
    elif name.startswith("CUDA_ERROR_"):
        out.append("hipError" + _camel(name[len("CUDA_ERROR_"):]))
    elif name == "CUDA_SUCCESS":
        out.append("hipSuccess")
    elif name.startswith("CUDA_"):
        out += ["HIP_" + name[5:], "hip" + _camel(name[5:])]
    elif name.startswith("__nv_"):
        out.append("__hip_" + name[5:])
    return out


def hip_header(header: str, torch_includes: dict[str, str], hip_names: set[str], hip_dir: Path | None) -> str:
    if header in torch_includes:
        return torch_includes[header]
    if header.startswith("cub/"):
        return "hipcub/hipcub.hpp"
    if header.startswith("cuda") and hip_dir is not None:
        candidate = "hip_" + header[len("cuda_"):] if header.startswith("cuda_") else "hip_" + header[4:]
        if (hip_dir / candidate).exists():
            return f"hip/{candidate}"
    if header.startswith("cudnn"):
        return ""
    if hip_dir is not None and (hip_dir / header).exists():
        return f"hip/{header}"
    return ""


def build(args) -> tuple[list[ApiEntry], list[tuple[str, str]]]:
    include = Path(args.cuda_include).resolve() if args.cuda_include else find_cuda_include()
    cudnn = Path(args.cudnn_include).resolve() if args.cudnn_include else None
    hip_dirs = [Path(p).resolve() for p in args.hip_include or ()]
    hip_dir = hip_dirs[-1] if hip_dirs else None   # for header names: the most complete set of headers
    hip_names, hip_label = hip_bindings(Path(args.hip_bindings).resolve())
    sources = [("cuda", cuda_version(include))]
    if cudnn:
        sources.append(("cudnn", cudnn_version(cudnn)))
    sources.append(("hip", hip_label))
    device_declared: set[str] = set()
    for directory in hip_dirs:
        more, functions, label = hip_headers(directory)
        device_declared |= functions
        hip_names |= {n for n in more if n.startswith(("hip", "HIP", "__hip"))}
        sources.append(("hip-device", label))
    torch_names, torch_includes, torch_label = torch_mappings(args.torch_python)
    sources.append(("torch", torch_label))

    entries: dict[str, ApiEntry] = {}
    names, deprecated = cuda_names(include, cudnn)

    def spelled(name: str, header: str = "") -> str:
        target = torch_names.get(name, "")
        device_header = torch_includes.get(header, "").startswith("hip/") and header not in HOST_HEADERS
        if target and (target in hip_names or LIBRARY_PREFIX.match(name) or device_header):
            return target
        candidates = mechanical(name)
        if device_header and candidates:   # __nv_bfloat16_raw -> __hip_bfloat16_raw, as its siblings map
            return candidates[0]
        return next((c for c in candidates if c in hip_names), "")

    for name, (kind, api, header) in names.items():
        hip = spelled(name, header)
        status = "unsupported" if not hip else "deprecated" if name in deprecated else "supported"
        entries[name] = ApiEntry(name, hip, status, kind, api, torch_names.get(name, ""))
    for name, header in device_names(include).items():
        if name in entries:
            continue
        torch = torch_names.get(name, "")
        supported = name in device_declared or torch or torch_includes.get(header, "").startswith("hip/")
        entries[name] = ApiEntry(name, torch or (name if supported else ""),
                                 "supported" if supported else "unsupported", "device", "device", torch)
    for name in sorted(cooperative_names(include)):
        hip = name if name in device_declared or name in hip_names else ""
        entries.setdefault(name, ApiEntry(name, hip, "supported" if hip else "unsupported", "type", "cg", ""))
    for name, target in torch_names.items():
        if name in entries:
            continue
        library = LIBRARY_PREFIX.match(name)
        if library:
            api = LIBRARY_API[library.group("lib").lower()]
            kind = "macro" if name.isupper() else "type" if name.endswith("_t") else "function"
            entries[name] = ApiEntry(name, target, "supported", kind, api, target)
        elif CUDA_NAME.match(name) and not INTERNAL.search(name):
            api = "driver" if re.match(r"^(?:cu[A-Z]|CU[a-z_])", name) else "runtime"
            entries[name] = ApiEntry(name, target, "removed", "function" if name[0].islower() else "enum", api, target)
    entries["cub"] = ApiEntry("cub", "hipcub", "supported", "namespace", "cub", torch_names.get("cub", ""))
    for header in headers_of(include, cudnn):
        target = hip_header(header, torch_includes, hip_names, hip_dir)
        api = "cudnn" if header.startswith("cudnn") else "cub" if header.startswith("cub/") else "runtime"
        entries[header] = ApiEntry(header, target, "supported" if target else "unsupported", "header", api,
                                   torch_includes.get(header, ""))
    for header, target in torch_includes.items():
        if header not in entries and "." in header and not header.startswith(("c10", "caffe2", "tensorpipe", "thrust")):
            library = LIBRARY_PREFIX.match(header.replace("/", "_"))
            api = LIBRARY_API[library.group("lib").lower()] if library else "library"
            entries[header] = ApiEntry(header, target, "supported", "header", api, target)
    return list(entries.values()), sources


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuda-include", help="CUDA include directory (default: from nvcc on PATH)")
    parser.add_argument("--cudnn-include", help="cuDNN include directory (nvidia-cudnn-cu13's nvidia/cudnn/include)")
    parser.add_argument("--hip-bindings", help="rocm-bindings-hip's rocm/bindings directory")
    parser.add_argument("--hip-include", action="append",
                        help="HIP headers directory for device functions (repeatable; see the sources above)")
    parser.add_argument("--torch-python", default=sys.executable, help="a Python interpreter with torch installed")
    parser.add_argument("--from-table", type=Path,
                        help="start from this table (its recorded sources) instead of the sources above")
    parser.add_argument("--hipify-perl", type=Path, help="a HIPIFY checkout's bin/hipify-perl (see hipify_source.py)")
    parser.add_argument("--hipify-label", default="", help="where the hipify-perl came from (repository, commit)")
    parser.add_argument("--hipify-docs", type=Path, help="the same checkout's docs/tables directory")
    parser.add_argument("--hip-headers", type=Path, help="HIP include directory with amd_hip_bf16.h (ROCm/clr)")
    parser.add_argument("--hip-headers-label", default="", help="where the HIP headers came from")
    parser.add_argument("-o", "--output", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.from_table:
        base = parse_table(args.from_table.read_text(encoding="utf-8"))
        entries = list(base.entries.values())
        sources = [item for item in base.sources if not item[0].startswith(("hipify", "hip-headers"))]
    elif args.hip_bindings:
        entries, sources = build(args)
    else:
        parser.error("give --hip-bindings (build from the sources) or --from-table")
    if args.hipify_perl:
        from scripts.hipify_source import NEWER_DOCS_SOURCE, docs_versions, header_device_names, overlay
        maps = read_maps(args.hipify_perl.read_text(encoding="utf-8", errors="replace"))
        versions = docs_versions(args.hipify_docs) if args.hipify_docs else {}
        hip_device = header_device_names(args.hip_headers) if args.hip_headers else set()
        entries = overlay(make_table(entries, sources), maps, versions, hip_device)
        sources.append(("hipify-perl", (f"hipify-perl for HIP {maps.version} "
                                        f"({args.hipify_label or args.hipify_perl}): "
                                        "default and -roc substitutions, unsupported lists")))
        if args.hipify_docs:
            sources.append(("hipify-docs", (f"HIPIFY docs/tables ({args.hipify_label or args.hipify_docs}): "
                                            "the version that added each HIP name")))
        sources.append(("hipify-docs-newer", NEWER_DOCS_SOURCE))
        if args.hip_headers:
            sources.append(("hip-headers",
                            f"HIP headers, bf16 device functions ({args.hip_headers_label or args.hip_headers})"))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render_table(entries, sources), encoding="utf-8")
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.status] = counts.get(entry.status, 0) + 1
    print(f"{args.output}: {len(entries)} entries {counts}")


if __name__ == "__main__":
    main()
