"""The real host: rttlab's controllers as Linux TCP congestion control (BPF struct_ops) in a
network-namespace testbed on this machine, with results in the simulator's form.

>>> import rttlab.host
>>> rttlab.host.missing() or rttlab.host.run("scenarios/host-dctcp.toml").summary

Needs root, the kernel's BTF, clang, bpftool and libbpf's headers (docs/host.md).
"""

from .build import HostError, HostUnavailable, missing
from .replay import replay
from .run import run
from .testbed import remove_all

__all__ = ["HostError", "HostUnavailable", "missing", "remove_all", "replay", "run"]
