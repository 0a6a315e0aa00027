"""What the real host needs of the machine, and the BPF programs and their loader built for the
running kernel.

The sources ship with the package (``rttlab/host/bpf``); they are compiled on first use into
rttlab's own cache directory (``$RTTLAB_HOST_CACHE``, else ``~/.cache/rttlab/host``), one
folder per kernel and source hash, against a ``vmlinux.h`` that bpftool dumps from the
kernel's BTF. Nothing else on the machine is written.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SOURCES = Path(__file__).parent / "bpf"
#: The BPF objects: the controllers (struct_ops maps), the tc ECN marker, and the observer of
#: Linux's own controllers (a tracepoint).
OBJECTS = ("timely", "swift", "dctcp", "marker", "observer")
#: Debian's packages that provide the tools (`make test` installs them as root).
PACKAGES = ("clang", "libbpf-dev", "bpftool", "ethtool", "iproute2")
#: The commands the testbed runs (from PACKAGES, iproute2, util-linux and gcc).
TOOLS = ("clang", "bpftool", "ip", "tc", "ss", "nstat", "ethtool", "taskset", "cc")
BTF = Path("/sys/kernel/btf/vmlinux")


class HostError(RuntimeError):
    """The real host failed on this machine (a command of the testbed's, a BPF program): the
    message says what and why."""


class HostUnavailable(HostError):
    """The machine cannot run the real host: the message says what is missing."""


def missing() -> str | None:
    """Why this machine cannot run the testbed, or None if it can: root, the kernel's BTF, and
    the tools (clang, bpftool, libbpf's headers, ip, tc, ethtool)."""
    if platform.system() != "Linux":
        return f"the real host needs Linux (this is {platform.system()})"
    if os.geteuid() != 0:
        return "the real host needs root (network namespaces, tc and BPF struct_ops)"
    if not BTF.exists():
        return f"the kernel has no BTF ({BTF} is missing): BPF struct_ops needs CONFIG_DEBUG_INFO_BTF"
    absent = [tool for tool in TOOLS if shutil.which(tool) is None]
    if not Path("/usr/include/bpf/libbpf.h").exists():
        absent.append("libbpf headers")
    if absent:
        return f"missing {', '.join(absent)} (Debian: apt-get install {' '.join(PACKAGES)})"
    return None


def require() -> None:
    """Raises `HostUnavailable` naming what is missing."""
    reason = missing()
    if reason:
        raise HostUnavailable(reason)


@dataclass(frozen=True)
class Built:
    """The compiled objects (`obj(name)`) and the loader, for this kernel."""

    root: Path

    def obj(self, name: str) -> Path:
        return self.root / f"{name}.bpf.o"

    @property
    def loader(self) -> Path:
        return self.root / "rttlab-host-loader"


def cache_root() -> Path:
    return Path(os.environ.get("RTTLAB_HOST_CACHE") or Path.home() / ".cache" / "rttlab" / "host")


def build() -> Built:
    """Compiles the BPF objects and the loader unless this kernel's build of these sources is
    already in the cache; raises `HostUnavailable` if the machine lacks what they need, and
    `RuntimeError` with the compiler's message if a source does not compile."""
    require()
    digest = hashlib.sha256()
    for src in sorted(SOURCES.iterdir()):
        digest.update(src.name.encode() + src.read_bytes())
    root = cache_root() / f"{platform.release()}-{digest.hexdigest()[:12]}"
    built = Built(root)
    if built.loader.exists() and all(built.obj(n).exists() for n in OBJECTS):
        return built
    tmp = root.with_name(root.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        with open(tmp / "vmlinux.h", "wb") as out:
            _check(["bpftool", "btf", "dump", "file", str(BTF), "format", "c"], stdout=out)
        for name in OBJECTS:
            _check(
                [
                    "clang",
                    "-O2",
                    "-g",
                    "-Wall",
                    "-target",
                    "bpf",
                    f"-I{tmp}",
                    "-c",
                    str(SOURCES / f"{name}.bpf.c"),
                    "-o",
                    str(tmp / f"{name}.bpf.o"),
                ]
            )
        _check(["cc", "-O2", "-Wall", "-o", str(tmp / "rttlab-host-loader"), str(SOURCES / "loader.c"), "-lbpf"])
        if root.exists():
            shutil.rmtree(root)
        tmp.rename(root)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return built


def _check(cmd: list[str], **kw) -> None:
    p = subprocess.run(cmd, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode:
        raise HostError(f"{' '.join(cmd[:2])} failed:\n{p.stderr.strip()}")
