"""The characteristic time T*(μ) and the optimal allocation w*(μ) (bai_lib.oracle)."""

import numpy as np
import pytest
from scipy.optimize import minimize

from bai_lib import characteristic_time


def _objective(w, mu, var):
    b = int(np.argmax(mu))
    return min((mu[b] - mu[j]) ** 2 / (2 * (var[b] / w[b] + var[j] / w[j]))
               for j in range(mu.size) if j != b)


def _generic(mu, var):
    """sup_w min_j ... by SLSQP on the epigraph form, from several starting points."""
    k = mu.size
    b = int(np.argmax(mu))
    best = (-np.inf, None)
    rng = np.random.default_rng(0)
    for start in [np.full(k, 1 / k)] + [rng.dirichlet(np.ones(k)) for _ in range(4)]:
        x0 = np.append(start, _objective(start, mu, var))
        cons = [{"type": "eq", "fun": lambda x: np.sum(x[:k]) - 1}]
        for j in range(k):
            if j != b:
                cons.append({"type": "ineq", "fun": lambda x, j=j: (mu[b] - mu[j]) ** 2
                             / (2 * (var[b] / x[b] + var[j] / x[j])) - x[k]})
        res = minimize(lambda x: -x[k], x0, constraints=cons, method="SLSQP",
                       bounds=[(1e-9, 1)] * k + [(0, None)], options={"ftol": 1e-14, "maxiter": 500})
        val = _objective(res.x[:k] / res.x[:k].sum(), mu, var)
        if val > best[0]:
            best = (val, res.x[:k] / res.x[:k].sum())
    return best


@pytest.mark.parametrize("seed", range(5))
def test_two_arms_closed_form(seed):
    rng = np.random.default_rng(seed)
    s1, s2 = rng.uniform(0.2, 3, size=2)
    gap = rng.uniform(0.05, 2)
    T, w = characteristic_time([gap, 0.0], [s1, s2])
    assert T == pytest.approx(2 * (s1 + s2) ** 2 / gap**2, rel=1e-12)
    np.testing.assert_allclose(w, [s1 / (s1 + s2), s2 / (s1 + s2)], rtol=1e-12)


@pytest.mark.parametrize("seed", range(8))
def test_matches_a_generic_optimiser_on_random_instances(seed):
    rng = np.random.default_rng(100 + seed)
    k = int(rng.integers(3, 8))
    mu = rng.normal(size=k)
    sig = rng.uniform(0.3, 2.5, size=k)
    T, w = characteristic_time(mu, sig)
    val, w_gen = _generic(mu, sig**2)
    # Ours is at least as good as the generic optimiser and agrees with it.
    assert 1 / T >= val * (1 - 1e-7)
    assert 1 / T == pytest.approx(val, rel=1e-5)
    np.testing.assert_allclose(w, w_gen, atol=2e-3)
    assert _objective(w, mu, sig**2) == pytest.approx(1 / T, rel=1e-10)
    # Every constraint is active at the optimum.
    b = int(np.argmax(mu))
    costs = [(mu[b] - mu[j]) ** 2 / (2 * (sig[b] ** 2 / w[b] + sig[j] ** 2 / w[j]))
             for j in range(k) if j != b]
    np.testing.assert_allclose(costs, 1 / T, rtol=1e-9)
    assert w.sum() == pytest.approx(1.0, abs=1e-14) and np.all(w > 0)


def test_invariances_and_equal_variance_condition():
    mu = np.array([0.3, 1.2, -0.4, 0.9, 0.0])
    T, w = characteristic_time(mu, 1.0)
    perm = np.array([3, 0, 4, 1, 2])
    T_p, w_p = characteristic_time(mu[perm], 1.0)
    assert T_p == pytest.approx(T, rel=1e-12)
    np.testing.assert_allclose(w_p, w[perm], rtol=1e-10)
    T_s, w_s = characteristic_time(2.0 * mu + 5.0, 2.0)   # shift and common scale
    assert T_s == pytest.approx(T, rel=1e-12)
    np.testing.assert_allclose(w_s, w, rtol=1e-10)
    b = int(np.argmax(mu))
    # Garivier & Kaufmann: for equal variances sum_{j != best} w_j^2 = w_best^2.
    assert np.sum(np.delete(w, b) ** 2) == pytest.approx(w[b] ** 2, rel=1e-10)


def test_bad_input_is_refused_with_the_parameter_named():
    with pytest.raises(ValueError, match="unique"):
        characteristic_time([1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="means"):
        characteristic_time([1.0])
    with pytest.raises(ValueError, match="means"):
        characteristic_time([1.0, np.nan])
    with pytest.raises(ValueError, match="noise_stds"):
        characteristic_time([1.0, 0.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="noise_stds"):
        characteristic_time([1.0, 0.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="noise_stds"):
        characteristic_time([1.0, 0.0], "1")


def test_allocation_time_is_minimised_by_the_optimal_weights():
    from bai_lib.oracle import allocation_time

    rng = np.random.default_rng(7)
    mu, sig = rng.normal(size=5), rng.uniform(0.5, 2.0, size=5)
    T, w = characteristic_time(mu, sig)
    assert allocation_time(mu, sig, w) == pytest.approx(T, rel=1e-10)
    for _ in range(20):
        assert allocation_time(mu, sig, rng.dirichlet(np.ones(5))) > T
    # Uniform allocation, equal noise: 4 sigma^2 k / gap_min^2.
    mu = np.array([1.0, 0.7, 0.2, 0.0])
    assert allocation_time(mu, 1.5, np.full(4, 0.25)) == pytest.approx(4 * 1.5**2 * 4 / 0.3**2)
    with pytest.raises(ValueError, match="weights"):
        allocation_time(mu, 1.0, [0.5, 0.5, 0.0, 0.0])
    with pytest.raises(ValueError, match="weights"):
        allocation_time(mu, 1.0, [0.5, 0.5])
    with pytest.raises(ValueError, match="weights"):
        allocation_time(mu, 1.0, [0.0, 0.5, 0.25, 0.25])


def test_glr_time_is_the_fixed_point_of_the_threshold():
    import math

    from bai_lib.oracle import glr_time

    for T, delta in ((5.0, 0.1), (214.0, 0.01), (1e4, 1e-6)):
        t = glr_time(T, delta)
        assert t == pytest.approx(T * math.log(t / delta), rel=1e-12)
        assert t > T * math.log(1 / delta)
        t_gk = glr_time(T, delta, "gk2016")
        assert t_gk == pytest.approx(T * math.log((math.log(t_gk) + 1) / delta), rel=1e-12)
        assert t_gk < t
    assert glr_time(10.0, 0.001) > glr_time(10.0, 0.01) > glr_time(10.0, 0.1)
    with pytest.raises(ValueError, match="T"):
        glr_time(0.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        glr_time(5.0, 1.0)
    with pytest.raises(ValueError, match="threshold"):
        glr_time(5.0, 0.1, "printed")
