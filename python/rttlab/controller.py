"""Congestion control written in Python, run by rttlab's simulator: no Rust, no rebuild.

Subclass :class:`RateController` (the message transport: TIMELY's rate computation engine,
completions in, a rate out) or :class:`WindowController` (the window transport: a TCP congestion
module, ACKs and losses in, a window out), the Python forms of the simulator's two controller
traits (``crates/cc/src/lib.rs``). Then run it::

    rttlab.run("timely-testbed", controller=MyTimely)                  # from Python
    rttlab run timely-testbed --set cc.algorithm=python --set cc.class=mymodule:MyTimely

One instance runs each connection. A controller does no I/O and keeps no clock: every event
carries the time (``now_ps``). Units are in the names: times in picoseconds (``_ps``), rates in
bit/s (``_bps``), sizes in bytes. ``docs/extending.md`` walks through ``examples/timely.py``.

Parameters: a class lists its parameters and their defaults in ``defaults``; a scenario's other
``cc`` keys replace them (``cc.alpha = 0.1``), an unknown key is an error naming it, and
``validate`` may refuse a value. A string with a unit is read in the unit the parameter's name
says (``t_low_ps = "50us"`` is 50 000 000). Each parameter is an attribute of the instance
(``self.alpha``), and the resolved values are recorded in the result's metadata.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from . import _core

#: A completion event (:class:`RateController`) and an ACK (:class:`WindowController`); see
#: their fields in ``rttlab/_core.pyi``.
Completion = _core.Completion
Ack = _core.Ack
#: Raised when a controller raised (its exception is the ``__cause__``, with its traceback) or
#: returned a rate or window no controller may (negative, NaN, infinite).
ControllerError = _core.ControllerError

#: The keys of ``cc`` that every connection heeds whatever its controller (PLB, the feedback
#: filter): a Python class's parameters are the other keys.
CC_COMMON = ("plb", "feedback", "feedback_samples")

#: The unit a parameter's name ends in, and the kind of quantity a string for it must be.
_UNITS = {"_ps": "ps", "_bps": "bps", "_bytes": "bytes"}


class _Controller:
    #: The controller's parameters and their defaults.
    defaults: ClassVar[Mapping[str, Any]] = {}
    #: What the controller needs of the transport and the fabric, declared as the simulator's
    #: own controllers declare it (``rttlab_cc::Needs``; ``docs/extending.md``): ``int`` (every
    #: switch adds telemetry), ``ecn`` (it reacts to marks), ``ecn_profile`` (the marking its
    #: switches default to: ``kmin``, ``kmax``, ``pmax``), ``ack_per_packet``, ``rate_limiter``
    #: (no NIC cap on outstanding bytes), ``cnp_interval``, ``base_rtt``, ``signal`` and
    #: ``signal_threshold``, ``delay`` (it keeps a delay target: ``cc.feedback = "median"``
    #: may filter its samples). Empty: none of them.
    needs: ClassVar[Mapping[str, Any]] = {}
    #: Set by :meth:`repath`; the simulator takes it after each call into the controller.
    _repath: bool = False
    #: The optional methods this class overrides (set for each subclass): the simulator calls
    #: only those.
    _hooks: ClassVar[tuple[str, ...]] = ()
    _optional: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_optional" in cls.__dict__:  # RateController or WindowController itself
            return
        base = RateController if issubclass(cls, RateController) else WindowController
        cls._hooks = tuple(m for m in base._optional if getattr(cls, m) is not getattr(base, m))

    def __init__(self, params: Mapping[str, Any]) -> None:
        for key, value in params.items():
            setattr(self, key, value)

    def repath(self) -> None:
        """Asks for a new path label for this connection, as PLB does: its next data packets
        hash onto another of the equal-cost paths (``routing.mode = "ecmp"``). The flows
        table counts it in ``repaths``."""
        self._repath = True

    @classmethod
    def resolve(cls, given: Mapping[str, Any]) -> dict[str, Any]:
        """The class's parameters: its ``defaults`` with ``given`` over them, strings with units
        read in the parameter's unit, then checked by ``validate``. Raises ``ValueError`` naming
        the key (``cc.KEY``), the value and what is allowed."""
        methods = {name for name, _ in inspect.getmembers(cls, callable)}
        for key in cls.defaults:
            if key in methods or key.startswith("_"):
                raise ValueError(
                    f"{cls.__qualname__}.defaults: parameter {key!r} would hide an attribute of the controller; rename it"
                )
        unknown = [k for k in given if k not in cls.defaults]
        if unknown:
            known = ", ".join(cls.defaults) or "none"
            raise ValueError(
                f"cc.{unknown[0]}: {given[unknown[0]]!r} is not a parameter of {cls.__qualname__}; its parameters: {known}"
            )
        params = {**cls.defaults, **given}
        for key, value in params.items():
            params[key] = _in_unit(key, value)
        cls.validate(params)
        return params

    @classmethod
    def validate(cls, params: dict[str, Any]) -> None:
        """Refuses parameter values the controller cannot run with: raise
        ``ValueError("cc.KEY: VALUE: what is allowed")``. By default everything is accepted."""


class RateController(_Controller):
    """A rate controller (message transport), TIMELY's *rate computation engine*: a completion
    event with its RTT sample goes in (:meth:`on_completion`), a target rate comes out
    (:meth:`rate_bps`). The NIC paces the connection's segments at that rate."""

    _optional = ("restart", "on_congestion_notification", "on_sent", "advance", "next_change_ps", "window_bytes")

    def __init__(self, line_rate_bps: int, params: Mapping[str, Any]) -> None:
        #: The connection's NIC line rate, bit/s.
        self.line_rate_bps = line_rate_bps
        super().__init__(params)

    def on_completion(self, c: Completion) -> None:
        """The receiver acknowledged a whole segment: ``c.rtt_ps`` is its RTT sample."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_completion(self, c)")

    def rate_bps(self) -> float:
        """The target rate in bit/s: positive and finite. Read after every event."""
        raise NotImplementedError(f"{type(self).__qualname__} must define rate_bps(self)")

    def metrics(self) -> dict[str, Any]:
        """What the flows table and time series report: any of ``rate_bps``, ``at_min_rate``,
        ``cwnd_bytes``, ``ssthresh_bytes``, ``dctcp_alpha``, ``fcwnd_pkts``, ``ecwnd_pkts``."""
        return {"rate_bps": self.rate_bps()}

    def restart(self) -> None:
        """The connection sends again after idle and asks for a fresh start
        (``nic.rate_after_idle = "reset"``)."""

    def on_congestion_notification(self, now_ps: int) -> None:
        """A CNP (or an ECN echo) reached the sender."""

    def on_sent(self, now_ps: int, sent_bytes: int) -> None:
        """The connection handed ``sent_bytes`` to its NIC."""

    def advance(self, now_ps: int) -> None:
        """Runs the controller's own timers up to ``now_ps``; called before the rate is read."""

    def next_change_ps(self) -> int | None:
        """When a timer of the controller's next changes its rate; None: no such timer."""
        return None

    def window_bytes(self) -> int | None:
        """Most bytes the connection may have in flight (a rate controller with a window, as
        HPCC); None: only the transport's cap."""
        return None


class WindowController(_Controller):
    """A window controller (window transport), a TCP congestion module: ACKs (:meth:`on_ack`)
    and losses (:meth:`on_loss`) go in, a congestion window comes out (:meth:`cwnd_bytes`)."""

    _optional = ("pacing_delay_ps",)

    def __init__(self, mss_bytes: int, params: Mapping[str, Any]) -> None:
        #: Payload bytes of a full packet.
        self.mss_bytes = mss_bytes
        super().__init__(params)

    def on_ack(self, a: Ack) -> None:
        """An ACK reached the sender's stack."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_ack(self, a)")

    def on_loss(self, loss: str, flight_bytes: int, now_ps: int) -> None:
        """A loss was detected: ``loss`` is ``"fast_retransmit"`` or ``"timeout"``."""
        raise NotImplementedError(f"{type(self).__qualname__} must define on_loss(self, loss, flight_bytes, now_ps)")

    def cwnd_bytes(self) -> float:
        """The congestion window in bytes: finite and not negative. Read after every event."""
        raise NotImplementedError(f"{type(self).__qualname__} must define cwnd_bytes(self)")

    def pacing_delay_ps(self) -> int | None:
        """The gap between sends when the window is below one packet (Swift §3.4); None:
        ACK-clocked."""
        return None

    def metrics(self) -> dict[str, Any]:
        """What the flows table and time series report (see :meth:`RateController.metrics`)."""
        return {"cwnd_bytes": self.cwnd_bytes()}


def _in_unit(key: str, value: Any) -> Any:
    """A parameter's value in the unit its name ends in: a string with a unit is converted."""
    unit = next((u for suffix, u in _UNITS.items() if key.endswith(suffix)), None)
    if unit is None or not isinstance(value, str):
        return value
    parsed = _core.base_units(value)
    if parsed is None or parsed[0] != unit:
        kind = {"ps": 'a duration ("50us")', "bps": 'a rate ("10Mbps")', "bytes": 'a size ("64KB")'}[unit]
        raise ValueError(f"cc.{key}: {value!r} is not {kind}, as the name's suffix asks; or give a number in {unit}")
    return parsed[1]


def class_path(cls: type) -> str:
    """``module:Qualname``, what ``cc.class`` names."""
    return f"{cls.__module__}:{cls.__qualname__}"


def import_class(path: str) -> type:
    """The controller class ``cc.class`` names (``module:Class``); a ``ValueError`` says what is
    wrong with it."""
    module, sep, name = path.partition(":")
    if not sep or not module or not name:
        raise ValueError(
            f'cc.class: {path!r} is not module:Class (e.g. "mycc:MyTimely", a class in an importable module)'
        )
    if "" not in sys.path and os.getcwd() not in sys.path:
        # A module beside the command, as `python` finds one (a console script's path lacks it).
        sys.path.append(os.getcwd())
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as e:
        raise ValueError(
            f"cc.class: {path!r}: module {module!r} cannot be imported ({e}); it must be on the Python path"
        ) from e
    for part in name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ValueError(f"cc.class: {path!r}: module {module!r} has no {name!r}")
    if not (isinstance(obj, type) and issubclass(obj, (RateController, WindowController))):
        raise ValueError(f"cc.class: {path!r} is not a subclass of rttlab.RateController or rttlab.WindowController")
    return obj


def prepare(scenario: dict[str, Any], controller: type | None = None) -> tuple[type, dict[str, Any]] | None:
    """For ``cc.algorithm = "python"``: the class (``controller``, else imported from
    ``cc.class``) and its resolved parameters, written back into ``scenario["cc"]`` with the
    class's ``needs`` so that the simulator reads them and the result records them; the class's kind is checked against ``transport.kind``. ``None`` for
    the simulator's own controllers."""
    cc = scenario.get("cc")
    if not isinstance(cc, dict) or cc.get("algorithm") != "python":
        return None
    common = {k: cc[k] for k in CC_COMMON if k in cc}
    given = {k: v for k, v in cc.items() if k not in ("algorithm", "class", "needs", *common)}
    if controller is not None:
        if not (isinstance(controller, type) and issubclass(controller, (RateController, WindowController))):
            raise ValueError(
                f"controller: {controller!r} is not a subclass of rttlab.RateController or rttlab.WindowController"
            )
        cls = controller
    elif isinstance(cc.get("class"), str):
        cls = import_class(cc["class"])
    else:
        raise ValueError(
            f'cc.class: {cc.get("class")!r}: cc.algorithm = "python" needs the class, as module:Class (e.g. "mycc:MyTimely")'
        )
    transport = (scenario.get("transport") or {}).get("kind", "message")
    wants = RateController if transport == "message" else WindowController
    if not issubclass(cls, wants):
        kind = (
            "a RateController (message transport)"
            if issubclass(cls, RateController)
            else "a WindowController (window transport)"
        )
        raise ValueError(
            f"cc.class: {class_path(cls)} is {kind}; transport.kind = {transport!r} takes a {wants.__name__}"
        )
    params = cls.resolve(given)
    scenario["cc"] = {"algorithm": "python", "class": class_path(cls), "needs": dict(cls.needs), **common, **params}
    return cls, params


def source_hash(cls: type) -> str:
    """A hash of the code that defines ``cls`` (its module's file, else its own source, as a
    notebook keeps it): the run cache's key includes it, so an edited controller runs again.
    Without either, a fresh token: such a class's runs are never taken from the cache."""
    try:
        code = Path(inspect.getfile(cls)).read_bytes()
    except (OSError, TypeError):
        try:
            code = inspect.getsource(cls).encode()
        except (OSError, TypeError):
            code = os.urandom(16)
    return hashlib.sha256(code).hexdigest()[:16]
