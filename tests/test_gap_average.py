"""bai_lib.poe.gap_average: prior averages of a two-arm algorithm, integrated over the gap."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bai_lib as B
from bai_lib.poe import gap_average
from bai_lib.stats import clopper_pearson, mean_ci

H2 = B.GaussianPrior.standard(2)
BLOCKS = B.Elimination(method="blocks")


def _plain(prior, delta, n_runs, seed):
    r = B.simulate(BLOCKS, prior, 1.0, delta, n_runs, seed, max_samples=2**62, progress=False)
    tau = r.stopping_times.astype(float)
    errors = int((~r.correct).sum())
    return tau.mean(), (mean_ci(tau)[1] - tau.mean()) / 1.96, errors / n_runs, \
        clopper_pearson(errors, n_runs)


@pytest.mark.parametrize("prior", [H2, B.GaussianPrior([0.3, -0.2], [1.0, 0.5])],
                         ids=["standard", "shifted"])
def test_the_gap_integral_matches_plain_monte_carlo(prior):
    g = gap_average(BLOCKS, prior, 1.0, 0.1, 1, runs_per_gap=200, step=0.1, progress=False)
    mean, se, poe, (lo, hi) = _plain(prior, 0.1, 100_000, 2)
    assert abs(g.mean_tau - mean) < 3 * math.hypot(se, g.mean_tau_se)
    assert lo <= g.poe <= hi
    assert g.mean_tau_se < se / 2  # the integral is the sharper estimate


def test_a_wrong_prior_is_caught_by_the_same_comparison():
    """The comparison above can fail: the integral for a prior with a wider gap (stds 1.3) is
    far from plain Monte Carlo under the standard prior."""
    wide = B.GaussianPrior([0.0, 0.0], [1.3, 1.3])
    g = gap_average(B.Elimination(method="blocks", delta0=B.delta0(H2, 0.1)), wide, 1.0, 0.1, 1,
                    runs_per_gap=200, step=0.1, progress=False)
    mean, se, _, _ = _plain(H2, 0.1, 100_000, 2)
    assert abs(g.mean_tau - mean) > 5 * math.hypot(se, g.mean_tau_se)


def test_a_finer_grid_gives_the_same_integral():
    coarse = gap_average(BLOCKS, H2, 1.0, 1e-3, 1, runs_per_gap=200, step=0.1, progress=False)
    fine = gap_average(BLOCKS, H2, 1.0, 1e-3, 3, runs_per_gap=200, step=0.05, progress=False)
    assert abs(coarse.mean_tau - fine.mean_tau) < 3 * math.hypot(coarse.mean_tau_se,
                                                                 fine.mean_tau_se)
    assert abs(coarse.poe - fine.poe) < 3 * math.hypot(coarse.poe_se, fine.poe_se)
    assert coarse.gaps[0] == pytest.approx(1e-3 * B.delta0(H2, 1e-3))
    assert np.all(np.diff(coarse.gaps) > 0) and coarse.runs == 200 * coarse.gaps.size


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="prior"):
        gap_average(BLOCKS, B.GaussianPrior.standard(3), 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="noise_stds"):
        gap_average(BLOCKS, H2, [1.0, 2.0], 0.1, 0)
    with pytest.raises(ValueError, match="algorithm"):
        gap_average(B.TTTS(), H2, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="algorithm"):
        gap_average(B.Elimination(widths="kl"), H2, 1.0, 0.1, 0)
    with pytest.raises(ValueError, match="runs_per_gap"):
        gap_average(BLOCKS, H2, 1.0, 0.1, 0, runs_per_gap=1)
    with pytest.raises(ValueError, match="step"):
        gap_average(BLOCKS, H2, 1.0, 0.1, 0, step=0.0)
    with pytest.raises(ValueError, match="lowest"):
        gap_average(BLOCKS, H2, 1.0, 0.1, 0, lowest=1e9)
