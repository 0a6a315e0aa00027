"""Congestion control together with path choice (`rttlab reproduce multipath`): what per-flow
ECMP's hash collisions cost a permutation and how flowlets, spraying, REPS and adaptive routing
recover it (and go-back-N's collapse under spraying beside selective repeat); PLB's headline on
WebSearch traffic; Swift's latest against median feedback when one path is slow."""

from . import feedback, permutation, plb  # noqa: F401
