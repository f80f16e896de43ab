"""The same bad input gets the same named ``ValueError`` from every public entry point.

For each public function of the math and orchestration modules, each scalar or vector parameter
is given, in turn, a string, a bool, NaN, a negative number (where the parameter must be
positive) and a 2-d array (where it must be a scalar or a vector), and each vector of means or
noise levels a list holding a bool, the others staying valid.
Every such call must raise ``ValueError`` whose message names the parameter; nothing is
converted, clipped or returned as a number. Compiled scalar kernels (``glr_beta``,
``conf_factor``, ``ttucb_c``, ``first_indifference_round``, ``solve_oracle``) and the
integrand ``abs_gap_density`` are called in inner loops on arguments their callers checked, and
are left out on purpose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from bai_lib import (GaussianPrior, bounds, confidence, estimate_cost, opt2, oracle, poe, priors,
                     simulate, simulate_deltas, stats, stopping)

H2 = GaussianPrior.standard(2)
H3 = GaussianPrior(means=[0.0, 0.2, -0.1], stds=[1.0, 0.5, 2.0])

STRING, BOOL, NAN, NEGATIVE, MATRIX = "string", "bool", "nan", "negative", "matrix"
MIXED = "bool-inside"  # np.asarray([0.5, True]) is [0.5, 1.0]: the bool must not pass as 1
BAD = {STRING: "0.1", BOOL: True, NAN: math.nan, NEGATIVE: -0.5, MATRIX: np.ones((2, 2)),
       MIXED: [0.5, True]}
SCALAR = (STRING, BOOL, NAN, MATRIX)          # any real scalar
POSITIVE = SCALAR + (NEGATIVE,)               # a positive scalar
VECTOR = (STRING, BOOL, NAN, MATRIX)          # a real vector (a scalar broadcasts)

# (name, function, valid keyword arguments, {parameter: kinds of bad value})
ENTRY_POINTS = [
    ("frequentist_lower_bound", bounds.frequentist_lower_bound,
     dict(gap=0.5, delta=0.1, noise_stds=1.0, constant=1.0),
     dict(gap=POSITIVE, delta=POSITIVE, noise_stds=POSITIVE, constant=POSITIVE)),
    ("truncated_bayes_lower_bound", bounds.truncated_bayes_lower_bound,
     dict(prior=H2, delta=0.1, cutoff=0.01, noise_stds=1.0),
     dict(delta=POSITIVE, cutoff=POSITIVE, noise_stds=POSITIVE)),
    ("N_V", bounds.N_V, dict(prior=H2, delta=0.1, noise_stds=1.0),
     dict(delta=POSITIVE, noise_stds=POSITIVE)),
    ("delta_L", bounds.delta_L, dict(prior=H2, noise_stds=1.0), dict(noise_stds=POSITIVE)),
    ("upper_bound_leading_term", bounds.upper_bound_leading_term,
     dict(prior=H2, delta=0.1, noise_stds=1.0), dict(delta=POSITIVE, noise_stds=POSITIVE)),
    ("upper_bound_condition", bounds.upper_bound_condition, dict(prior=H2, delta=0.1),
     dict(delta=POSITIVE)),
    ("bernoulli_kl", bounds.bernoulli_kl, dict(a=0.2, b=0.6),  # elementwise: any shape
     dict(a=(STRING, BOOL, NAN), b=(STRING, BOOL, NAN))),
    ("delta0", priors.delta0, dict(prior=H3, delta=0.1, factor=4.0),
     dict(delta=POSITIVE, factor=POSITIVE)),
    ("allocation", opt2.allocation, dict(gap=0.5, lam=2.0, noise_stds=1.0),
     dict(gap=SCALAR, lam=POSITIVE, noise_stds=POSITIVE)),
    ("budget_and_poe", opt2.budget_and_poe, dict(prior=H2, lam=2.0, noise_stds=1.0),
     dict(lam=POSITIVE, noise_stds=POSITIVE)),
    ("solve", opt2.solve, dict(prior=H2, budget=100.0, noise_stds=1.0),
     dict(budget=POSITIVE, noise_stds=POSITIVE)),
    ("budget_for_poe", opt2.budget_for_poe, dict(prior=H2, target=0.1, noise_stds=1.0),
     dict(target=POSITIVE, noise_stds=POSITIVE)),
    ("uniform_allocation_poe", opt2.uniform_allocation_poe,
     dict(prior=H2, budget=100.0, noise_stds=1.0), dict(budget=POSITIVE, noise_stds=POSITIVE)),
    ("poe_lower_bound", opt2.poe_lower_bound, dict(prior=H2, budget=100.0, noise_stds=1.0),
     dict(budget=POSITIVE, noise_stds=POSITIVE)),
    ("large_budget_poe", opt2.large_budget_poe, dict(prior=H2, budget=100.0, noise_stds=1.0),
     dict(budget=POSITIVE, noise_stds=POSITIVE)),
    ("characteristic_time", oracle.characteristic_time,
     dict(means=[1.0, 0.5, 0.0], noise_stds=1.0), dict(means=VECTOR, noise_stds=POSITIVE)),
    ("glr_time", oracle.glr_time, dict(T=10.0, delta=0.1), dict(T=POSITIVE, delta=POSITIVE)),
    ("ttucb_cg", stopping.ttucb_cg, dict(x=2.0), dict(x=POSITIVE)),
    ("ttucb_two_cg", stopping.ttucb_two_cg, dict(k=3, delta=0.1),
     dict(k=POSITIVE, delta=POSITIVE)),
    ("threshold_glr_rule", stopping.threshold, dict(algorithm="union", t=100.0, delta=0.1, k=3),
     dict(t=POSITIVE, delta=POSITIVE, k=POSITIVE)),
    ("threshold", stopping.threshold, dict(algorithm="ttucb", t=100.0, delta=0.1, k=3),
     dict(t=POSITIVE, delta=POSITIVE, k=POSITIVE)),
    ("predicted_stopping_time", stopping.predicted_stopping_time,
     dict(algorithm="ttts", gap=0.5, delta=0.1, noise_stds=1.0),
     dict(gap=POSITIVE, delta=POSITIVE, noise_stds=POSITIVE)),
    ("gap_for_stopping_time", stopping.gap_for_stopping_time,
     dict(algorithm="ttts", t=100.0, delta=0.1, noise_stds=1.0),
     dict(t=POSITIVE, delta=POSITIVE, noise_stds=POSITIVE)),
    ("conf_width", confidence.conf_width, dict(n=10, noise_stds=1.0, delta=0.1, k=2),
     dict(n=POSITIVE, noise_stds=POSITIVE, delta=POSITIVE, k=POSITIVE)),
    ("conf_log_term", confidence.conf_log_term, dict(n=10, delta=0.1, k=2),
     dict(n=POSITIVE, delta=POSITIVE, k=POSITIVE)),
    ("indifference_round", confidence.indifference_round,
     dict(delta=0.1, delta0=0.05, k=2, noise_stds=1.0),
     dict(delta=POSITIVE, delta0=POSITIVE, k=POSITIVE, noise_stds=POSITIVE)),
    ("failure_bound", confidence.failure_bound, dict(delta=0.1), dict(delta=POSITIVE)),
    ("clopper_pearson", stats.clopper_pearson, dict(n_success=3, n=10, level=0.95),
     dict(n_success=POSITIVE, n=POSITIVE, level=POSITIVE)),
    ("normal_interval", stats.normal_interval, dict(estimate=0.1, std_error=0.01, level=0.95),
     dict(estimate=SCALAR, std_error=POSITIVE, level=POSITIVE)),
    ("simulate", simulate,
     dict(algorithm="ttucb", prior=H2, noise_stds=1.0, delta=0.1, n_runs=2, seed=1,
          max_samples=10**4, n_threads=1),
     dict(noise_stds=POSITIVE, delta=POSITIVE, n_runs=POSITIVE, seed=POSITIVE,
          max_samples=POSITIVE, n_threads=POSITIVE, first_run=POSITIVE, chunk_size=POSITIVE)),
    ("simulate budget", simulate,
     dict(algorithm="ttucb", prior=H2, noise_stds=1.0, delta=0.1, n_runs=2, seed=1,
          max_samples=10**4, n_threads=1, budget=60.0), dict(budget=POSITIVE)),
    ("estimate_cost", estimate_cost,
     dict(algorithm="ttucb", prior=H2, noise_stds=1.0, delta=0.1, n_runs=2, seed=1,
          max_samples=10**4, n_threads=1, pilot_seconds=0.05, budget=60.0),
     dict(noise_stds=POSITIVE, delta=POSITIVE, n_runs=POSITIVE, seed=POSITIVE,
          max_samples=POSITIVE, n_threads=POSITIVE, first_run=POSITIVE, pilot_seconds=POSITIVE,
          budget=POSITIVE)),
    ("simulate means", simulate,
     dict(algorithm="ttucb", prior=None, noise_stds=1.0, delta=0.1, n_runs=2, seed=1,
          means=[1.0, 0.0], max_samples=10**4),
     dict(means=(STRING, BOOL, NAN))),
    ("simulate_deltas", simulate_deltas,
     dict(algorithm="ttucb", prior=H2, noise_stds=1.0, deltas=[0.1, 0.05], n_runs=2, seed=1,
          max_samples=10**4),
     dict(deltas=(STRING, BOOL, NAN, MATRIX), n_runs=POSITIVE, seed=POSITIVE)),
    ("plain_poe", poe.plain_poe,
     dict(algorithm="elimination", prior=H2, noise_stds=1.0, delta=0.1, n_runs=4, seed=1),
     dict(noise_stds=POSITIVE, delta=POSITIVE, n_runs=POSITIVE, seed=POSITIVE,
          level=POSITIVE)),
    ("importance_poe", poe.importance_poe,
     dict(algorithm="elimination", prior=H2, noise_stds=1.0, delta=0.1, n_runs=4, seed=1),
     dict(noise_stds=POSITIVE, delta=POSITIVE, n_runs=POSITIVE, seed=POSITIVE,
          level=POSITIVE, half_width=POSITIVE, defensive=POSITIVE)),
]

CASES = [pytest.param(fn, kwargs, param, kind, id=f"{name}-{param}-{kind}")
         for name, fn, kwargs, params in ENTRY_POINTS
         for param, kinds in params.items()
         for kind in kinds + ((MIXED,) if param in ("noise_stds", "means") else ())]


@pytest.mark.parametrize("fn, kwargs, param, kind", CASES)
def test_bad_value_is_refused_by_name(fn, kwargs, param, kind):
    args = dict(kwargs, **{param: BAD[kind]})
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        fn(**args)


@pytest.mark.parametrize("name, fn, kwargs, params",
                         [pytest.param(*e, id=e[0]) for e in ENTRY_POINTS])
def test_the_valid_arguments_are_accepted(name, fn, kwargs, params):
    """The table's base arguments are valid: each failure above is the bad value's doing."""
    fn(**kwargs)


@pytest.mark.parametrize("name, fn, kwargs, params",
                         [pytest.param(*e, id=e[0]) for e in ENTRY_POINTS
                          if "prior" in e[2] and e[2]["prior"] is not None])
@pytest.mark.parametrize("prior", ["standard", None, 3, [0.0, 1.0]])
def test_a_prior_that_is_not_a_gaussian_prior_is_refused(name, fn, kwargs, params, prior):
    if prior is None and fn in (simulate, simulate_deltas):
        pytest.skip("simulate takes prior=None with fixed means")
    with pytest.raises(ValueError, match=r"\bprior\b"):
        fn(**dict(kwargs, prior=prior))
