"""Algorithm specifications: which algorithm to simulate, under which conventions.

Each algorithm is a small frozen object that checks its options once, computes its constants
once (``Δ0``, the TTUCB constant ``2 C_G``, ...) and binds them to its compiled kernel
(:mod:`bai_lib.algorithms.base` describes the protocol). :func:`bai_lib.simulate` accepts a specification or
one of the names in :data:`ALGORITHMS` (each name stands for the specification with default
options), and every :class:`~bai_lib.SimulationResult` carries the specification it
was produced with.

Conventions
-----------
Where the paper's text and the code the authors released differ, both are available, and each
option says which source it follows:

=========================  =============================  ==========================================
specification, option      as printed in the paper        as in the released code
=========================  =============================  ==========================================
``Elimination.recommend``  ``"uniform"`` (default)        ``"uniform"``
``NoElim.recommend``       ``"uniform"`` (default)        ``"empirical_best"``
``Elimination/NoElim``     ``delta0_factor=4`` (default)  4 (Experiment 1, 3), 1 (Experiment 2)
``TTTS.challenger``        (not specified)                ``"released"``; default ``"exact"``
``TTUCB.threshold``        ``"printed"``: ``√c``          ``"released"``: ``√(2c)`` (default)
``TTUCB.log_term``         ``"printed"``: ``log(t/2)``    ``"released"``: ``log((t-1)/2)`` (default)
``TTUCB.sampling``         (not specified)                ``"released"`` (default)
=========================  =============================  ==========================================

The paper's own algorithms default to the printed text. TTUCB defaults to the released code:
its printed threshold drops the factor 2 of the Gaussian GLR test it cites.

Algorithms
----------
===============  =======================================================  ================================
name             specification                                            module
===============  =======================================================  ================================
``elimination``  :class:`Elimination`: Algorithm 1 of the paper           ``algorithms/elimination.py``
``noelim``       :class:`NoElim`: its no-elimination variant              ``algorithms/elimination.py``
``ttts``         :class:`TTTS`: Top-Two Thompson Sampling, any ``β``      ``algorithms/ttts.py``
``ttucb``        :class:`TTUCB`: Top-Two UCB, any ``β``                   ``algorithms/top_two.py``
``ebtc``         :class:`EBTC`: empirical-best / transportation cost      ``algorithms/top_two.py``
``tas``          :class:`TrackAndStop`: Track-and-Stop, D- or C-tracking  ``algorithms/track_and_stop.py``
``lucb``         :class:`LUCB`: LUCB1 with Gaussian confidence bounds     ``algorithms/lucb.py``
``posterior``    :class:`PosteriorRule`: the A/B platforms' rules         ``algorithms/posterior_rules.py``
===============  =======================================================  ================================

Adding an algorithm means one module with its specification (and, if it needs one, its kernel;
for one stopped by the GLR test, the four steps of its sampling rule, which run in the shared loop
of :mod:`bai_lib.algorithms.glr`) and one entry in :data:`ALGORITHMS`; :func:`register` does the
same for a class defined elsewhere.
A sampling rule of your own, written as one ``@njit`` function, runs through
:class:`SamplingRule` (:mod:`bai_lib.algorithms.plugin`).
"""

from __future__ import annotations

from .base import Algorithm, Binding
from .elimination import Elimination, NoElim
from .top_two import EBTC, TTUCB
from .ttts import TTTS
from .lucb import LUCB
from .plugin import SamplingRule
from .posterior_rules import PosteriorRule
from .track_and_stop import TrackAndStop

__all__ = ["Algorithm", "Binding", "Elimination", "NoElim", "TTTS", "TTUCB", "EBTC",
           "TrackAndStop", "LUCB", "PosteriorRule",
           "SamplingRule", "ALGORITHMS", "register", "resolve"]

#: The string aliases accepted by :func:`bai_lib.simulate`, each for its default specification.
ALGORITHMS: dict[str, type] = {}


def register(cls: type) -> type:
    """Make ``cls.name`` an alias of ``cls()`` in :func:`bai_lib.simulate` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
        raise ValueError(f"cls must be a subclass of Algorithm, got {cls!r}")
    if not isinstance(cls.name, str) or not cls.name:
        raise ValueError(f"cls.name must be a non-empty string, got {cls.name!r}")
    if cls.name in ALGORITHMS and ALGORITHMS[cls.name] is not cls:
        raise ValueError(f"cls.name {cls.name!r} is already registered for {ALGORITHMS[cls.name]!r}")
    ALGORITHMS[cls.name] = cls
    return cls


for _cls in (Elimination, NoElim, TTTS, TTUCB, EBTC, TrackAndStop, LUCB, PosteriorRule):
    register(_cls)


def resolve(algorithm: Algorithm | str) -> Algorithm:
    """Return the specification for a specification or a name in
    :data:`~bai_lib.algorithms.ALGORITHMS`."""
    if isinstance(algorithm, Algorithm):
        return algorithm
    if isinstance(algorithm, str) and algorithm in ALGORITHMS:
        return ALGORITHMS[algorithm]()
    raise ValueError(f"algorithm must be one of {tuple(ALGORITHMS)} or a specification such as "
                     f"Elimination(...), got {algorithm!r}")
