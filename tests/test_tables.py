"""The quantities behind the Experiment 2 tables: hand-made runs with known answers, and real
paired runs of Algorithm 1 and NoElim checked against their definitions."""

from types import SimpleNamespace

import math

import numpy as np
import pytest

import bai_lib
from bai_lib import Elimination, GaussianPrior, NoElim, delta0, kernels, published
from bai_lib import tables as T
from bai_lib.confidence import indifference_round
from bai_lib.experiments import instance_sets
from bai_lib.stats import clopper_pearson, error_counts_fisher_p


def runs(tau, reasons, correct):
    """A stand-in for a SimulationResult with the given runs."""
    return SimpleNamespace(stopping_times=np.asarray(tau), stop_reasons=np.asarray(reasons),
                           correct=np.asarray(correct, dtype=bool), n_runs=len(tau))


# six runs of a 4-armed problem with n* = 10: two indifference stops (one with two arms left,
# one with three), three single-arm stops (one wrong), one censored
ELIM = runs([25, 31, 7, 5, 12, 40], ["indifference", "indifference", "single_arm", "single_arm",
                                     "single_arm", "censored"],
            [False, True, True, False, True, True])
NOELIM = runs([40, 40, 8, 12, 16, 44], ["indifference", "indifference", "single_arm",
                                        "single_arm", "single_arm", "censored"],
              [True, True, True, False, True, True])


def test_stop_reasons_count_runs_and_their_wrong_recommendations():
    assert T.stop_reason_counts(ELIM) == {"single_arm": (3, 1), "indifference": (2, 1),
                                          "censored": (1, 0)}
    assert T.stop_reason_counts(NOELIM, ["indifference", "glr"]) == {"indifference": (2, 0),
                                                                     "glr": (0, 0)}
    assert set(T.STOP_REASONS) <= set(kernels.STOP_REASON_NAMES)
    with pytest.raises(ValueError, match="reasons"):
        T.stop_reason_counts(ELIM, ["timeout"])
    with pytest.raises(ValueError, match="reasons"):
        T.stop_reason_counts(ELIM, "single_arm")
    with pytest.raises(ValueError, match="result"):
        T.stop_reason_counts([1, 2, 3])


def test_indifference_share_and_the_two_arm_stops():
    n, share = T.indifference_share(ELIM)
    assert n == 2 and share == (25 + 31) / 120
    assert T.indifference_stops_with_two_arms(ELIM, 10) == (2, 1)     # 25 < 30 <= 31
    assert T.indifference_stops_with_two_arms(ELIM, 11) == (2, 2)
    with pytest.raises(ValueError, match="n_star"):
        T.indifference_stops_with_two_arms(ELIM, 0)
    with pytest.raises(ValueError, match="result"):
        T.indifference_share(None)


def test_maxima_against_caps_and_their_ratios():
    paper = {"elimination": SimpleNamespace(max=21.0), "noelim": SimpleNamespace(max=40.0)}
    row = T.maxima_against_caps({"elimination": ELIM, "noelim": NOELIM, "ttts": None},
                                "delta/L", 10, 4, paper)
    assert row == dict(convention="delta/L", n_star=10, noelim_cap=40, two_n_star=20,
                       noelim_max=44, elimination_max=40, paper_noelim_max=40.0,
                       paper_elimination_max=21.0)
    assert T.cap_ratios(row) == {"noelim_over_cap": 1.1, "paper_noelim_over_cap": 1.0,
                                 "elimination_over_cap": 2.0, "paper_elimination_over_cap": 1.05}
    with pytest.raises(ValueError, match="results"):
        T.maxima_against_caps({"elimination": ELIM}, "delta/L", 10, 4, paper)
    with pytest.raises(ValueError, match="convention"):
        T.maxima_against_caps({"elimination": ELIM, "noelim": NOELIM}, "", 10, 4, paper)
    with pytest.raises(ValueError, match="k"):
        T.maxima_against_caps({"elimination": ELIM, "noelim": NOELIM}, "x", 10, 1, paper)
    with pytest.raises(ValueError, match="paper"):
        T.maxima_against_caps({"elimination": ELIM, "noelim": NOELIM}, "x", 10, 4, {})
    with pytest.raises(ValueError, match="row"):
        T.cap_ratios({"noelim_cap": 40})


def test_same_round_check_on_hand_made_runs():
    out = T.same_round_check({"elimination": ELIM, "noelim": NOELIM}, 10, 4)
    # NoElim's rounds R = 10, 10, 2, 3, 4, 11 and brackets [R + 3, 4R]: all of Algorithm 1's
    # stopping times are inside theirs but 5 < 3 + 3
    assert out == dict(noelim_multiple_of_k=True, noelim_indiff_at_nstar=True,
                       same_stop_reason=1.0, alg1_tau_in_bracket=5 / 6,
                       alg1_indiff_tau_over_nstar_max=3.1, noelim_errors=1, alg1_errors=2)
    odd = runs([41, 40, 8, 12, 16, 44], NOELIM.stop_reasons, NOELIM.correct)
    out = T.same_round_check({"elimination": ELIM, "noelim": odd}, 9, 4)
    assert not out["noelim_multiple_of_k"] and not out["noelim_indiff_at_nstar"]
    none = runs([3, 5], ["single_arm", "single_arm"], [True, True])
    assert math.isnan(T.same_round_check({"elimination": none, "noelim": none}, 9, 4)
                      ["alg1_indiff_tau_over_nstar_max"])
    with pytest.raises(ValueError, match=r"results\['noelim'\] must be a SimulationResult"):
        T.same_round_check({"elimination": ELIM, "noelim": [1, 2]}, 10, 4)
    with pytest.raises(ValueError, match="same number of runs"):
        T.same_round_check({"elimination": ELIM, "noelim": none}, 10, 4)


DELTA, K = 0.3, 4
H4 = GaussianPrior.standard(K)
N_STAR = indifference_round(DELTA, delta0(H4, DELTA, factor=1), K)


@pytest.fixture(scope="module")
def paired():
    """Algorithm 1 and NoElim on the same 400 instances of four arms at δ = 0.3 with
    Δ0 = δ/L, where many runs end at the indifference stop."""
    return {name: bai_lib.simulate(spec, H4, 1.0, DELTA, 400, 7, progress=False)
            for name, spec in (("elimination", Elimination(delta0_factor=1)),
                               ("noelim", NoElim(delta0_factor=1)))}


def test_the_checks_on_real_paired_runs(paired):
    e, ne = paired["elimination"], paired["noelim"]
    assert np.array_equal(e.means, ne.means)
    out = T.same_round_check(paired, N_STAR, K)
    assert out["noelim_multiple_of_k"] and out["noelim_indiff_at_nstar"]
    assert out["same_stop_reason"] == np.mean(e.stop_reasons == ne.stop_reasons) > 0.9
    assert out["alg1_errors"] == e.summary()["n_errors"]
    counts = T.stop_reason_counts(e)
    assert sum(n for n, _ in counts.values()) == e.n_runs
    assert sum(w for _, w in counts.values()) == e.summary()["n_errors"]
    n_ind, share = T.indifference_share(e)
    assert n_ind == counts["indifference"][0] >= 10 and 0 < share < 1
    stops, two_arms = T.indifference_stops_with_two_arms(e, N_STAR)
    assert stops == n_ind and 0 < two_arms <= stops
    row = T.maxima_against_caps(paired, "delta/L", N_STAR, K,
                                {a: published.row(2, a) for a in ("elimination", "noelim")})
    ratios = T.cap_ratios(row)
    assert row["noelim_max"] == row["noelim_cap"] == K * N_STAR     # an indifference stop
    assert ratios["noelim_over_cap"] == 1 and ratios["elimination_over_cap"] >= 1


def test_published_error_test_is_fishers_test_of_the_two_counts(paired):
    e = paired["elimination"]
    s = e.summary()
    out = T.published_error_test(e, 0.006)
    assert out["paper_errors"] == 6 and out["errors"] == s["n_errors"]
    lo, hi = clopper_pearson(s["n_errors"], 400)
    assert (out["error_lo"], out["error_hi"]) == (lo, hi)
    assert out["p"] == error_counts_fisher_p(6, s["n_errors"], 1000, 400)
    assert T.published_error_test(e, 0.0, 400)["p"] == error_counts_fisher_p(0, s["n_errors"], 400)
    for bad, match in ((1.5, "published_error"), (float("nan"), "published_error"),
                       ("0.1", "published_error")):
        with pytest.raises(ValueError, match=match):
            T.published_error_test(e, bad)
    with pytest.raises(ValueError, match="published_runs"):
        T.published_error_test(e, 0.1, 0)


def test_instance_set_row_places_the_published_row_among_the_sets():
    H = GaussianPrior.standard(3)
    sets = instance_sets(NoElim(delta0_factor=1), H, 1.0, 0.2, 5, 40, 3, progress=False)
    paper = published.PublishedRow(2, "noelim", float(np.median(sets.avg)), 1e6, 0.0)
    row = T.instance_set_row(sets, paper)
    assert row["pct_avg"] == 50.0                 # the median of five distinct set averages
    assert (row["avg_lo"], row["avg_hi"]) == (sets.avg.min(), sets.avg.max())
    assert (row["max_lo"], row["max_hi"]) == (sets.max.min(), sets.max.max())
    assert row["pct_err"] == sets.percentile("error", 0.0)
    assert list(row) == ["avg", "pct_avg", "avg_lo", "avg_hi", "max", "max_lo", "max_hi",
                         "err", "pct_err", "err_lo", "err_hi"]
    with pytest.raises(ValueError, match="sets"):
        T.instance_set_row(sets.result, paper)
    with pytest.raises(ValueError, match="paper"):
        T.instance_set_row(sets, {"avg": 1.0})
