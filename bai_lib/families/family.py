"""The functions every reward family provides, resolved by the compiler from the family's bundle.

A family is a bundle class (a named tuple of its scalar constants,
:class:`~bai_lib.families.gaussian.Gaussian` or :class:`~bai_lib.families.bernoulli.Bernoulli`) and
one module of compiled functions, registered here under that class. Per-arm arrays (noise levels,
variances) are passed beside the bundle, not in it: a compiled function that reads an array out of
a tuple argument pays two atomic reference counts, which at every sample cost the loops nine tenths
of their speed. A compiled loop calls the generic functions of this module with the bundle as first
argument; numba resolves each call at compile time, from the bundle's type, to the family's own
function, so no branch on the family runs inside a loop, the call is inlined like any other, and
the loop is cached on disk once per family (:func:`~bai_lib.kernels.bundle_generic`). The family is
chosen once, when a specification binds (:meth:`bai_lib.algorithms.Algorithm.bind`).

Every function takes the bundle ``fam`` first; ``S``, ``N``, ``mh``, ``v`` are the per-arm
sums, counts, empirical means and statistic variances ``var_i / N_i`` of a run, ``var`` the
variances the statistics use.
"""

from __future__ import annotations

from ..kernels import bundle_generic

__all__ = ["draw", "observe", "glr_passes", "challenger_cost", "solve_oracle", "FUNCTIONS",
           "register"]

#: ``draw(fam, z, mu_arm, sigma_arm) -> x``: a reward of an arm (mean parameter ``mu_arm``, as
#: the simulators receive it, noise level ``sigma_arm``) from the standard normal ``z`` of the
#: run's stream.
draw = bundle_generic("draw", "fam, z, mu_arm, sigma_arm")
#: ``observe(fam, arm, x, S, N, mh, v, inv_next, var)``: book the reward ``x`` of ``arm`` in the
#: sums, counts, means and statistic variances (``inv_next`` holds ``1/(N_i + 1)``, prepared one
#: pull ahead).
observe = bundle_generic("observe", "fam, arm, x, S, N, mh, v, inv_next, var")
#: ``glr_passes(fam, mh, v, N, best, c) -> bool``: whether the GLR statistic ``Z_{best,j}``
#: reaches ``c / 2`` for every ``j != best``.
glr_passes = bundle_generic("glr_passes", "fam, mh, v, N, best, c")
#: ``challenger_cost(fam, mh, v, N, lead, j, signed) -> float``: the transportation cost of
#: ``j`` against the leader ``lead`` that the top-two challengers minimise; ``signed`` keeps the
#: sign of ``μ̂_lead − μ̂_j`` (the released TTUCB code) instead of its positive part.
challenger_cost = bundle_generic("challenger_cost", "fam, mh, v, N, lead, j, signed")
#: ``solve_oracle(fam, mh, var, best, w, u_guess) -> (T_star, u)``: the optimal weights
#: ``w*(μ̂)`` of the family's divergence, written into ``w`` (Track-and-Stop).
solve_oracle = bundle_generic("solve_oracle", "fam, mh, var, best, w, u_guess")

#: The generic functions a family implements, by name.
FUNCTIONS = {f.__name__: f for f in (draw, observe, glr_passes, challenger_cost, solve_oracle)}


def register(bundle: type, module: object) -> type:
    """Register ``module``'s compiled functions named as in :data:`FUNCTIONS` as the family of
    the bundle class ``bundle`` (a named tuple); every one of them must be there."""
    missing = [name for name in FUNCTIONS if not hasattr(module, name)]
    if missing:
        raise ValueError(f"module {module.__name__} lacks {missing} for the family {bundle}")
    for name, generic in FUNCTIONS.items():
        generic.register(bundle, getattr(module, name))
    return bundle
