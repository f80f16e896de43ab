"""Result helpers of the orchestration layer."""

import csv
import math

import numpy as np
import pytest

from bai_lib.experiments import write_csv
from bai_lib.stats import ccdf, mean_ci, running_mean


def test_ccdf():
    v, p = ccdf(np.array([3, 1, 2, 2]))
    assert v.tolist() == [1, 2, 3]
    assert p.tolist() == [1.0, 0.75, 0.25]
    with pytest.raises(ValueError):
        ccdf(np.array([]))


def test_running_mean():
    assert running_mean([2, 4, 6]).tolist() == [2.0, 3.0, 4.0]


def test_mean_ci_covers_at_nominal_rate():
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(2000):
        lo, hi = mean_ci(rng.exponential(size=50))
        hits += lo <= 1.0 <= hi
    # normal approximation on skewed data: coverage close to (slightly under) 95%
    assert 0.91 < hits / 2000 < 0.97


def test_write_csv_roundtrip(tmp_path):
    rows = [{"a": 1, "b": 0.123456789}, {"a": 2, "b": 1e-9}]
    path = write_csv(rows, tmp_path / "x" / "t.csv")
    got = list(csv.DictReader(path.open()))
    assert got == [{"a": "1", "b": "0.123457"}, {"a": "2", "b": "1e-09"}]
    with pytest.raises(ValueError):
        write_csv([], tmp_path / "y.csv")


def test_run_experiment_uses_common_random_numbers_and_the_paper_settings():
    from bai_lib import published
    from bai_lib.experiments import comparison_rows, run_experiment

    res = run_experiment(1, n_runs=40, max_samples=10**6, progress=False)
    assert set(res) == set(published.EXPERIMENTS[1]["algorithms"])
    means = [r.means for r in res.values()]
    assert all(np.array_equal(means[0], m) for m in means[1:])
    assert all(r.delta == 0.1 and r.k == 2 for r in res.values())
    rows = comparison_rows(res, 3)
    assert [r["algorithm"] for r in rows] == list(res)
    by = {r["algorithm"]: r for r in rows}
    assert by["ttts"]["paper_comp"] == 27.6
    assert np.isnan(by["ttts"]["avg_ci_low"]) and not np.isnan(by["elimination"]["avg_ci_low"])
    with pytest.raises(ValueError, match="experiment"):
        run_experiment(3)


def test_loglog_slope_recovers_a_power_law():
    from bai_lib.stats import loglog_slope

    x = np.geomspace(1e-3, 1.0, 50)
    slope, intercept, se = loglog_slope(x, 3.0 * x**-2)
    assert slope == pytest.approx(-2.0) and intercept == pytest.approx(np.log(3.0)) and se < 1e-10
    noisy = 3.0 * x**-2 * np.exp(np.random.default_rng(0).normal(0, 0.3, x.size))
    s2, _, se2 = loglog_slope(x, noisy)
    assert abs(s2 + 2.0) < 4 * se2 and se2 > 0
    with pytest.raises(ValueError):
        loglog_slope([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError):
        loglog_slope([1.0, 2.0, -1.0], [1.0, 2.0, 3.0])


def test_loglog_slope_is_the_exact_least_squares_line_of_the_logs():
    """Against exact rational arithmetic on the same float logs: within a few ulps, so the fit
    does not depend on a LAPACK solver (whose kernels differ between machines)."""
    import math
    from fractions import Fraction

    from bai_lib.stats import loglog_slope

    rng = np.random.default_rng(3)
    for n in (3, 17, 400):
        x = np.geomspace(1e-4, 2.0, n) * np.exp(rng.normal(0, 0.05, n))
        y = 0.7 * x**-0.5 * np.exp(rng.normal(0, 0.4, n))
        lx = [Fraction(math.log(v)) for v in x.tolist()]
        ly = [Fraction(math.log(v)) for v in y.tolist()]
        mx, my = sum(lx) / n, sum(ly) / n
        sxx = sum((a - mx) ** 2 for a in lx)
        exact = sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx
        icept = my - exact * mx
        rss = sum((b - my - exact * (a - mx)) ** 2 for a, b in zip(lx, ly))
        se = math.sqrt(float(rss / (n - 2) / sxx))
        slope, intercept, se_got = loglog_slope(x, y)
        assert abs(slope - float(exact)) <= 4 * math.ulp(float(exact)), (n, slope, float(exact))
        assert abs(intercept - float(icept)) <= 1e-13 * max(1.0, abs(float(icept)))
        assert se_got == pytest.approx(se, rel=1e-12)
    with pytest.raises(ValueError, match="constant"):
        loglog_slope([2.0, 2.0, 2.0], [1.0, 2.0, 3.0])


def test_instance_sets_are_blocks_of_one_seed():
    from bai_lib import GaussianPrior, simulate
    from bai_lib.experiments import instance_sets

    H = GaussianPrior.standard(2)
    sets = instance_sets("elimination", H, 1.0, 0.1, 4, 50, 7, progress=False)
    first = simulate("elimination", H, 1.0, 0.1, 50, 7, progress=False)
    assert sets.n_sets == 4 and sets.set_size == 50
    assert sets.avg[0] == first.stopping_times.mean() and sets.max[0] == first.stopping_times.max()
    assert sets.error[0] == first.error_rate
    tau = sets.result.stopping_times.reshape(4, 50)
    np.testing.assert_array_equal(sets.median, np.median(tau, axis=1))
    # independent sets differ
    assert len(set(sets.avg.tolist())) == 4
    assert sets.percentile("avg", sets.avg.max() + 1) == 100.0
    assert sets.percentile("avg", sets.avg.min()) == 12.5
    with pytest.raises(ValueError, match="statistic"):
        sets.percentile("mean", 1.0)
    with pytest.raises(ValueError, match="n_sets"):
        instance_sets("elimination", H, 1.0, 0.1, 0, 50, 7)


def test_empirical_percentile_mid_rank():
    from bai_lib.stats import empirical_percentile

    assert empirical_percentile(2.0, [1.0, 2.0, 3.0, 4.0]) == 37.5
    assert empirical_percentile(0.0, [1.0, 2.0]) == 0.0
    with pytest.raises(ValueError, match="sample"):
        empirical_percentile(1.0, [])


def test_comparison_rows_swapped_reading():
    from bai_lib.experiments import comparison_rows, run_experiment
    from bai_lib import TTUCB

    res = run_experiment(1, n_runs=20, max_samples=10**5, progress=False,
                         algorithms={"ttts": "ttts", "ttucb_printed": TTUCB(threshold="printed")})
    assert list(res) == ["ttts", "ttucb_printed"]
    rows = {r["algorithm"]: r for r in comparison_rows(res, 1, reading="swapped")}
    assert rows["ttts"]["paper_avg"] == 1.95e5 and rows["ttts"]["paper_error"] == 0.005
    assert rows["ttucb_printed"]["paper_avg"] == 1.56e5


def test_heterogeneous_setting_draws_in_the_released_ranges():
    from bai_lib._book import heterogeneous_setting

    prior, sigma = heterogeneous_setting(3)
    prior2, sigma2 = heterogeneous_setting(3)
    assert prior == prior2 and np.array_equal(sigma, sigma2)
    assert prior.k == 10 and sigma.shape == (10,)
    assert np.all((prior.stds >= 0.5) & (prior.stds <= 1.5))
    assert np.all((sigma >= 0.5) & (sigma <= 1.5))
    assert heterogeneous_setting(4)[0] != prior
    means = np.array([heterogeneous_setting(s, 4)[0].means for s in range(400)]).ravel()
    assert abs(means.mean()) < 0.15 and 0.85 < means.std() < 1.15
    with pytest.raises(ValueError, match="seed"):
        heterogeneous_setting(-1)
    with pytest.raises(ValueError, match="k"):
        heterogeneous_setting(1, k=1)


def test_share_by_counts_events_up_to_each_time_with_exact_intervals():
    from bai_lib.stats import clopper_pearson, share_by

    times = np.array([5, 10, 10, 40, 100, 100])
    events = np.array([True, True, False, True, True, False])   # two censored at 10 and 100
    share, lo, hi = share_by(times, events, [1, 10, 50, 1000])
    np.testing.assert_allclose(share, [0, 2 / 6, 3 / 6, 4 / 6])
    assert (lo[2], hi[2]) == pytest.approx(clopper_pearson(3, 6))
    assert np.all(lo <= share) and np.all(share <= hi)
    with pytest.raises(ValueError, match="times and events"):
        share_by(times, events.astype(int), [1])
    with pytest.raises(ValueError, match="times and events"):
        share_by([], np.zeros(0, bool), [1])


def test_paired_errors_is_mcnemars_exact_test():
    from scipy.stats import binomtest

    from bai_lib.stats import paired_errors

    a = np.array([True] * 12 + [False] * 80 + [True] * 5 + [False] * 3)
    b = np.array([False] * 12 + [False] * 80 + [True] * 5 + [True] * 3)
    only_a, only_b, p = paired_errors(a, b)
    assert (only_a, only_b) == (12, 3)
    assert p == pytest.approx(binomtest(12, 15).pvalue)
    assert paired_errors(a, a) == (0, 0, 1.0)
    assert paired_errors(np.zeros(30, bool), np.ones(30, bool))[2] < 1e-8
    with pytest.raises(ValueError, match="wrong_a and wrong_b"):
        paired_errors(a.astype(int), b)
    with pytest.raises(ValueError, match="wrong_a and wrong_b"):
        paired_errors(a, b[:-1])


def test_error_counts_fisher_p():
    from scipy.stats import fisher_exact

    from bai_lib.stats import error_counts_fisher_p

    assert error_counts_fisher_p(5, 0, 1000) == pytest.approx(fisher_exact([[5, 995], [0, 1000]])[1])
    assert error_counts_fisher_p(3, 3, 1000) == 1.0
    assert error_counts_fisher_p(30, 0, 1000) < 1e-6
    assert error_counts_fisher_p(6, 0, 1000, 500) == pytest.approx(fisher_exact([[6, 994], [0, 500]])[1])
    with pytest.raises(ValueError, match="errors"):
        error_counts_fisher_p(1001, 0, 1000)
    with pytest.raises(ValueError, match="n_a"):
        error_counts_fisher_p(1, 0, -5)


def test_top_two_gap():
    from bai_lib.stats import top_two_gap

    m = np.array([[0.0, 1.0, 0.5], [2.0, -1.0, 1.9], [3.0, 3.0, 0.0]])
    np.testing.assert_allclose(top_two_gap(m), [0.5, 0.1, 0.0])
    two = np.array([[0.3, -0.2], [-1.0, 0.5]])
    np.testing.assert_allclose(top_two_gap(two), np.abs(two[:, 0] - two[:, 1]))
    with pytest.raises(ValueError, match="means"):
        top_two_gap(np.zeros(3))


def test_delta_rows_statistics_and_when_a_mean_is_reported():
    from bai_lib import GaussianPrior, simulate_deltas
    from bai_lib.experiments import delta_rows

    H = GaussianPrior.standard(2)
    res = simulate_deltas("elimination", H, 1.0, [0.3, 0.01], 400, 3, progress=False)
    rows = delta_rows(res, truncations=(100, 10**4))
    assert [r["delta"] for r in rows] == [0.3, 0.01]
    for r, (d, sim) in zip(rows, res.items()):
        tau = sim.stopping_times
        assert r["median"] == np.median(tau) and r["q90"] == sim.summary()["q90"]
        assert r["trunc_100"] == pytest.approx(np.minimum(tau, 100).mean())
        assert r["trunc_100"] <= r["trunc_10000"] <= tau.mean()
        assert r["error_lo"] <= r["error"] <= r["error_hi"]
    # 400 runs x 0.3 = 120 >= 20: a mean with its interval; 400 x 0.01 = 4 < 20: none
    assert rows[0]["mean_lo"] < rows[0]["mean"] == pytest.approx(res[0.3].stopping_times.mean())
    assert np.isnan(rows[1]["mean"]) and np.isnan(rows[1]["mean_hi"])
    with pytest.raises(ValueError, match="truncations"):
        delta_rows(res, truncations=(10**10,))


def test_delta_rows_withholds_the_mean_of_censored_levels():
    from bai_lib import GaussianPrior, simulate_deltas
    from bai_lib.experiments import delta_rows

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = simulate_deltas("ttucb", GaussianPrior.standard(2), 1.0, [0.3, 0.1], 300, 5,
                              max_samples=2000, progress=False)
    rows = delta_rows(res, truncations=(1000,), min_errors_budget=1.0)
    for r, sim in zip(rows, res.values()):
        assert r["n_censored"] == int(sim.censored.sum()) > 0
        assert np.isnan(r["mean"])


def test_hill_tail_index_recovers_a_pareto_index():
    from bai_lib.stats import hill_tail_index

    rng = np.random.default_rng(11)
    estimates = []
    for alpha in (0.5, 1.0, 2.0):
        x = rng.uniform(size=20_000) ** (-1 / alpha)  # P(X > x) = x^-alpha for x >= 1
        a, se = hill_tail_index(x, 2000)
        assert abs(a - alpha) < 4 * se and se == pytest.approx(a / np.sqrt(2000))
        estimates.append(a)
    assert estimates[0] < estimates[1] < estimates[2]
    with pytest.raises(ValueError, match="m"):
        hill_tail_index([1.0, 2.0, 3.0], 3)
    with pytest.raises(ValueError, match="equal"):
        hill_tail_index([5.0] * 10, 3)


def test_wilson_interval_covers_at_nominal_rate_and_matches_the_formula():
    from bai_lib.stats import wilson_interval

    lo, hi = wilson_interval(np.array([0, 5, 100]), 100)
    assert lo[0] == 0.0 and hi[2] == pytest.approx(1.0)
    # the textbook closed form at p = 0.05, n = 100, z = 1.96
    z, p, n = 1.96, 0.05, 100
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert (lo[1], hi[1]) == pytest.approx((centre - half, centre + half), rel=1e-12)
    rng = np.random.default_rng(11)
    counts = rng.binomial(200, 0.3, size=4000)
    lo, hi = wilson_interval(counts, 200)
    cover = np.mean((lo <= 0.3) & (0.3 <= hi))
    assert 0.935 <= cover <= 0.965, cover   # 95% nominal; 4000 trials give +-0.7% (1 s.e.)


def test_normal_interval_is_estimate_plus_minus_z_se():
    from scipy.stats import norm

    from bai_lib.stats import normal_interval

    lo, hi = normal_interval(1.0, 0.5, 0.9)
    assert (lo, hi) == pytest.approx((1.0 - norm.ppf(0.95) * 0.5, 1.0 + norm.ppf(0.95) * 0.5))


def test_no_mean_interval_for_algorithm_1_on_poisson_arms():
    """Algorithm 1's stopping time is bounded on sub-Gaussian rewards only: on Poisson arms
    (KL widths grow with the mean) the comparison gives no normal interval for its mean."""
    from bai_lib import Elimination, GammaPrior, GaussianPrior, simulate
    from bai_lib.experiments import comparison_rows

    gauss = simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 20, 1, progress=False)
    pois = simulate(Elimination(widths="kl"), GammaPrior([4, 4], [8, 8]), None, 0.1, 20, 1,
                    progress=False)
    rows = {r["algorithm"]: r for r in comparison_rows({"g": gauss, "p": pois}, 1)}
    assert not np.isnan(rows["g"]["avg_ci_low"]) and np.isnan(rows["p"]["avg_ci_low"])
