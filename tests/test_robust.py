"""Algorithm 1 for a prior known only within a family (bai_lib.robust): the suprema of L over
each family against brute force, and the probability of error under the family's worst truth."""

import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import Elimination, GaussianPrior, simulate
from bai_lib.quadrature import iid_L
from bai_lib.robust import L_sup_scale, L_sup_shift, L_sup_student_t, robust_factor
from bai_lib.stats import clopper_pearson


def test_scale_family_of_equal_means_is_the_ratio_times_L():
    for H in (GaussianPrior.standard(2), GaussianPrior.standard(4),
              GaussianPrior([1.0, 1.0, 1.0], [0.5, 1.0, 2.0])):
        assert L_sup_scale(H, 8.0) == pytest.approx(8.0 * H.L(), rel=1e-12)
        assert L_sup_scale(H, 1.0) == pytest.approx(H.L(), rel=1e-12)


@pytest.mark.parametrize("means, stds, ratio", [
    ([0.0, 1.0], [0.3, 1.0], 8.0),    # the supremum inside the range
    ([0.0, 3.0], [1.0, 1.0], 2.0),    # at the wide end
    ([0.0, 0.1, 2.0], [1.0, 0.5, 1.0], 4.0)])
def test_scale_family_matches_a_dense_search(means, stds, ratio):
    H = GaussianPrior(means, stds)

    def L(c):
        return GaussianPrior(means, np.array(stds) * c).L()

    # a grid of 201 scales, then 201 more around each of its three best points, at the spacing
    # of a uniform grid of 20,001 (in log-scale): a dense search at a sixth of the cost
    logs = np.linspace(-np.log(ratio), np.log(ratio), 201)
    coarse = np.array([L(np.exp(x)) for x in logs])
    step = logs[1] - logs[0]
    fine = [L(np.exp(x)) for i in np.argsort(coarse)[-3:]
            for x in np.clip(logs[i] + np.linspace(-step, step, 201), logs[0], logs[-1])]
    brute = max(coarse.max(), max(fine))
    got = L_sup_scale(H, ratio)
    assert got >= brute * (1 - 1e-9)
    assert got == pytest.approx(brute, rel=1e-5)


def test_shift_family_two_arms_closed_form_and_brute_force():
    A = GaussianPrior([0.0, 4.0], [1.0, 2.0])
    s = math.hypot(1.0, 2.0)
    assert L_sup_shift(A, 1.5) == pytest.approx(2 * stats.norm.pdf(1.0 / s) / s, rel=1e-12)
    assert L_sup_shift(A, 2.5) == pytest.approx(GaussianPrior([0.0, 0.0], [1.0, 2.0]).L(),
                                                rel=1e-10)
    assert L_sup_shift(A, 0.0) == pytest.approx(A.L(), rel=1e-10)
    grid = np.linspace(-1.5, 1.5, 61)
    brute = max(GaussianPrior([a, 4.0 + b], [1.0, 2.0]).L() for a in grid for b in grid)
    assert L_sup_shift(A, 1.5) == pytest.approx(brute, rel=1e-9)


def test_shift_family_three_arms_is_at_least_every_sampled_member():
    H = GaussianPrior([0.0, 1.0, 3.0], [1.0, 1.0, 1.0])
    got = L_sup_shift(H, 0.5)
    rng = np.random.default_rng(0)
    sampled = max(GaussianPrior(H.means + rng.uniform(-0.5, 0.5, 3), H.stds).L()
                  for _ in range(400))
    corners = max(GaussianPrior(H.means + 0.5 * np.array(c), H.stds).L()
                  for c in np.array(np.meshgrid(*[[-1, 1]] * 3)).T.reshape(-1, 3))
    assert got >= max(sampled, corners) * (1 - 1e-9)
    assert got <= 1.05 * max(sampled, corners)


def test_student_t_family_is_its_smallest_nu():
    H = GaussianPrior([0.5, 0.5], [2.0, 2.0])
    t3 = iid_L(stats.t(3, loc=0.5, scale=2.0 * math.sqrt(1 / 3)), 2)
    assert L_sup_student_t(H, 3.0) == pytest.approx(t3, rel=1e-10)
    assert t3 > H.L()
    H10 = GaussianPrior.standard(5)
    t5 = iid_L(stats.t(5, scale=math.sqrt(3 / 5)), 5)
    assert L_sup_student_t(H10, 5.0) == pytest.approx(t5, rel=1e-10)


def test_robust_factor_is_four_times_the_ratio():
    H = GaussianPrior([0.0, 0.0], [8.0, 8.0])
    assert robust_factor(H, L_sup_scale(H, 8.0)) == pytest.approx(32.0, rel=1e-12)
    assert robust_factor(H, H.L()) == 4.0
    with pytest.raises(ValueError, match="L_sup"):
        robust_factor(H, 0.5 * H.L())


@pytest.mark.parametrize("call, name", [
    (lambda: L_sup_scale(GaussianPrior.standard(2), 0.5), "ratio"),
    (lambda: L_sup_scale(GaussianPrior.standard(2), float("nan")), "ratio"),
    (lambda: L_sup_shift(GaussianPrior.standard(2), -1.0), "shift"),
    (lambda: L_sup_student_t(GaussianPrior.standard(2), 2.0), "nu_min"),
    (lambda: L_sup_student_t(GaussianPrior([0.0, 1.0], [1.0, 1.0]), 3.0), "prior"),
    (lambda: robust_factor(GaussianPrior.standard(2), -1.0), "L_sup")])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _poe(assumed, factor, truth_means, delta):
    spec = Elimination() if factor is None else Elimination(delta0_factor=factor)
    res = simulate(spec, assumed, 1.0, delta, truth_means.shape[0], 7, means=truth_means,
                   progress=False)
    n_err = int(np.count_nonzero(~res.correct))
    return clopper_pearson(n_err, res.n_runs, 0.999), res.stopping_times.mean()


def test_robust_algorithm1_keeps_the_error_below_delta_where_the_plain_one_does_not():
    # The truth N(0, 1)², told N(0, 16²): sixteen times too wide. The plain Algorithm 1's
    # error is far above δ; with the scale family of ratio 16 its Δ0 is the correct one.
    delta, n = 0.1, 4000
    truth = GaussianPrior.standard(2).sample_means(11, n)
    told = GaussianPrior([0.0, 0.0], [16.0, 16.0])
    (lo_plain, _), tau_plain = _poe(told, None, truth, delta)
    (_, hi_robust), tau_robust = _poe(told, robust_factor(told, L_sup_scale(told, 16.0)),
                                      truth, delta)
    assert lo_plain > delta
    assert hi_robust < delta
    assert tau_robust > tau_plain


def test_robust_algorithm1_under_a_shifted_prior_mean():
    delta, n = 0.1, 4000
    truth = GaussianPrior.standard(2).sample_means(12, n)
    told = GaussianPrior([0.0, 5.0], [1.0, 1.0])
    (lo_plain, _), _ = _poe(told, None, truth, delta)
    (_, hi_robust), _ = _poe(told, robust_factor(told, L_sup_shift(told, 2.5)), truth, delta)
    assert lo_plain > delta
    assert hi_robust < delta


# ------------------------------------------------------------------ overflow and names
def test_a_factor_that_overflows_is_refused_not_returned_as_inf():
    """4 L_sup / L(H') beyond the largest double is refused, not returned as inf; a factor that
    fits is the double (4 L_sup) / L (equal to 4 (L_sup / L): a factor 4 is exact)."""
    H = GaussianPrior.standard(3)
    for L_sup in (1e308, 1.7e308, 4e307):
        with pytest.raises(ValueError, match=r"^L_sup = .*overflows double precision"):
            robust_factor(H, L_sup)
    L = H.L()
    for L_sup in (L, 2.5 * L, 1e300, 1e307):
        assert robust_factor(H, L_sup) == 4.0 * L_sup / L


@pytest.mark.parametrize("call, match", [
    (lambda: L_sup_scale(GaussianPrior([0.0, 1.0], [1.0, 1.0]), 1e300), r"^ratio = 1e\+300"),
    (lambda: L_sup_scale(GaussianPrior([0.0, 1.0], [1e-90, 1.0]), 1e20), r"^ratio = 1e\+20"),
    (lambda: L_sup_scale(GaussianPrior.standard(10), 1.7e308),
     r"^ratio = 1.7e\+308: the supremum of L overflows"),
    (lambda: L_sup_shift(GaussianPrior([0.0, 0.5, 1.0], [1.0, 0.5, 2.0]), 1e150),
     r"^shift = 1e\+150"),
    (lambda: L_sup_student_t(GaussianPrior.standard(3), 1e306), r"^nu_min must be .* at most"),
    (lambda: L_sup_student_t(GaussianPrior.standard(3), math.inf), r"^nu_min must"),
], ids=["scale-1e300", "scale-stds-1e-90", "scale-iid-overflow", "shift-1e150", "t-1e306",
        "t-inf"])
def test_an_argument_beyond_the_supported_range_is_refused_by_its_name(call, match):
    """The error names the parameter the caller passed (not 'means and stds' of the family's
    members, nor 'L of 3 iid arms with law <scipy ...>'), and an overflow is refused, not
    returned as inf."""
    with pytest.raises(ValueError, match=match):
        call()


def test_equal_means_need_no_search_and_take_any_ratio():
    """With equal means L(cH) = L(H) / c: the supremum ratio x L(H') needs no member of the
    family, whatever their stds."""
    H = GaussianPrior.standard(3)
    assert L_sup_scale(H, 1e300) == 1e300 * H.L()
    tiny = GaussianPrior([0.0, 0.0], [1e-90, 1e-90])
    assert L_sup_scale(tiny, 1e20) == 1e20 * tiny.L()


def test_members_of_the_scale_family_whose_L_underflows_do_not_stop_the_search():
    """Two arms: L(c) = 2 φ(d / (c s)) / (c s) with s = sqrt(σ1² + σ2²), largest at c s = d,
    where it is 2 φ(1) / d. With ratio = 1e50 the grid reaches c = 1e-50, where L underflows;
    such members cannot hold the supremum, which is at least L(H'), and do not stop the
    search."""
    H = GaussianPrior([0.0, 1.0], [1.0, 1.0])
    exact = 2.0 * stats.norm.pdf(1.0) / 1.0
    assert L_sup_scale(H, 1e50) == pytest.approx(exact, rel=1e-9)
    assert L_sup_scale(H, 8.0) == pytest.approx(exact, rel=1e-9)
    assert L_sup_shift(GaussianPrior([0.0, 1.0], [1.0, 1.0]), 1e308) == pytest.approx(
        1.0 / math.sqrt(math.pi), rel=1e-12)  # two arms: the means meet, any shift
