"""DCTCP (Alizadeh et al., SIGCOMM 2010): ns-3's DCTCP example (the paper's Fig. 17 setup) run
as written, beside the example's documented output and a run of ns-3 itself, and the paper's
analysis of the queue under N long flows."""

from . import ns3_example, queue  # noqa: F401
