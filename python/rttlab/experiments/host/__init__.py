"""The simulator beside the kernel: the same star scenarios run by `rttlab.host` on Linux (the
controllers as BPF struct_ops) and by the simulator, as written and with the host delay the
kernel showed."""

from . import kernel  # noqa: F401  (registers the experiment)
