"""How fleet reaches a Dask scheduler. Dask's client trusts its scheduler and workers completely: they exchange
pickles, so whoever can answer at the scheduler's address, or join the cluster as a worker, runs code in this
process. What keeps that to the cluster the user meant is TLS with certificates (Dask's `Security`: a CA that
signed the scheduler's and workers' certificates, and this client's own certificate when the cluster asks for
one). So a plain (unencrypted, unauthenticated) address is accepted only on this machine's loopback, or when
the user says `--insecure-scheduler`."""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.util.errors import ToolError

ENCRYPTED = ("tls", "wss")             # Dask's TLS transports
PLAIN = ("tcp", "ws")                  # neither encrypted nor authenticated
LOCAL_ONLY = ("inproc",)               # within this process


class SchedulerRefused(ToolError):
    """A scheduler address or TLS setting fleet will not use: exit 2, before anything is submitted."""


@dataclass(frozen=True, slots=True)
class SchedulerSecurity:
    """The TLS files the user named (each optional: Dask's own `distributed.comm.tls.*` config fills in the
    rest), and whether a plain address off this machine is allowed."""
    ca_file: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    insecure: bool = False

    @property
    def named(self) -> bool:
        return any(f is not None for f in (self.ca_file, self.cert, self.key))


def scheme_and_host(address: str) -> tuple[str, str]:
    """`tls://10.0.0.5:8786` -> (`tls`, `10.0.0.5`); Dask reads an address without a scheme as tcp."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    rest = rest.split("/", 1)[0]
    if rest.startswith("["):   # [::1]:8786
        return scheme.lower(), rest[1:].split("]", 1)[0]
    return scheme.lower(), rest.rsplit(":", 1)[0] if rest.count(":") == 1 else rest


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False   # a name: it could resolve anywhere


def client_security(address: str, given: SchedulerSecurity) -> Any:
    """The `distributed.security.Security` for a client of `address` (None: Dask's defaults, for a plain
    loopback or an allowed insecure address), or SchedulerRefused saying why not."""
    scheme, host = scheme_and_host(address)
    if scheme in ENCRYPTED:
        return _tls(address, given)
    if given.named:
        raise SchedulerRefused(f"--tls-ca-file, --tls-cert and --tls-key need a tls:// scheduler address, not "
                               f"{address}")
    if scheme in LOCAL_ONLY or (scheme in PLAIN and (is_loopback(host) or given.insecure)):
        return None
    if scheme in PLAIN:
        raise SchedulerRefused(
            f"the Dask scheduler {address} is plain {scheme}:// off this machine: anyone who can answer there "
            "runs code in this process (Dask exchanges pickles). Use tls:// with --tls-ca-file, --tls-cert and "
            "--tls-key (or Dask's distributed.comm.tls config), or say --insecure-scheduler on a network you trust")
    raise SchedulerRefused(f"the Dask scheduler {address}: fleet connects over {', '.join(ENCRYPTED + PLAIN)}:// "
                           f"only, not {scheme}://")


def _tls(address: str, given: SchedulerSecurity) -> Any:
    from distributed.security import Security

    for name, path in (("--tls-ca-file", given.ca_file), ("--tls-cert", given.cert), ("--tls-key", given.key)):
        if path is not None and not path.is_file():
            raise SchedulerRefused(f"{name} {path}: no such file")
    if given.key is not None and given.cert is None:
        raise SchedulerRefused("--tls-key goes with --tls-cert (the certificate it is the key of)")
    named = {"tls_ca_file": given.ca_file, "tls_client_cert": given.cert, "tls_client_key": given.key}
    security = Security(require_encryption=True, **{k: str(v) for k, v in named.items() if v is not None})
    if not getattr(security, "tls_ca_file", None):   # from the arguments or Dask config
        raise SchedulerRefused(f"the Dask scheduler {address} needs the CA that signed its certificate: "
                               "--tls-ca-file (or Dask's distributed.comm.tls.ca-file)")
    if not getattr(security, "tls_client_cert", None):   # Dask's TLS always presents one
        raise SchedulerRefused(f"the Dask scheduler {address} needs this client's certificate: --tls-cert and "
                               "--tls-key (or Dask's distributed.comm.tls.client.cert and .key)")
    return security
