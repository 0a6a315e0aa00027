"""The comparison (`rttlab reproduce training`): Ultra Ethernet's transport (NSCC; NSCC with
receiver credits) beside DCQCN, HPCC, Swift, TIMELY and DCTCP on a full-bisection fat-tree and a
4:1 oversubscribed leaf-spine, each under per-flow ECMP and under its best per-packet path
choice, on training traffic (a ring all-reduce, a skewed mixture-of-experts all-to-all), an
incast, a permutation, and WebSearch beside a ring all-reduce."""

from . import runs  # noqa: F401
