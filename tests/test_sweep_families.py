"""Sweeps and cells speak every reward family: Beta priors (Bernoulli arms) and Gamma priors
(Poisson arms) in the configuration, the cell's description and id, the store and its summary."""

import numpy as np
import pytest

from bai_lib import BetaPrior, GammaPrior, GaussianPrior, simulate
from bai_lib.algorithms import Elimination, TTUCB
from bai_lib.cell import Cell, ConfigError
from bai_lib.formatting import summary_table
from bai_lib.sweep import parse_sweep, run_sweep

CONFIG = {"seed": 5, "runs": 12, "shard_runs": 5,
          "grid": {"algorithm": ["ttucb", {"name": "elimination", "widths": "kl"}],
                   "arms": [3], "delta": [0.1],
                   "prior": [{"family": "beta", "a": 3, "b": 7},
                             {"family": "gamma", "a": [4, 4, 4], "b": [8, 8, 8]}]}}


def test_a_sweep_runs_beta_and_gamma_priors_as_simulate_does(tmp_path):
    sweep = parse_sweep(CONFIG)
    assert sorted({c.rewards for c in sweep.cells}) == ["bernoulli", "poisson"]
    assert {c.prior_label for c in sweep.cells} == {"Beta(3, 7)^3", "Gamma(4, 8)^3"}
    # without a noise level the family's: 1/2 for Bernoulli arms, 1 for Poisson arms
    assert {c.rewards: c.noise_stds[0] for c in sweep.cells} == {"bernoulli": 0.5,
                                                                 "poisson": 1.0}
    store = run_sweep(sweep, tmp_path / "store", progress=False)
    table = store.table()
    for cell in sweep.cells:
        rows = table[table["config"] == cell.id].sort_values("run")
        res = simulate(cell.algorithm, cell.prior, None, cell.delta, cell.runs, cell.seed,
                       progress=False)
        assert res.rewards == cell.rewards
        assert np.array_equal(rows["tau"].to_numpy(), res.stopping_times), cell.prior_label
        assert np.array_equal(rows["recommendation"].to_numpy(), res.recommendations)
    text = summary_table(store)
    assert "Beta(3, 7)^3" in text and "Gamma(4, 8)^3" in text


@pytest.mark.parametrize("prior", [BetaPrior([1, 2], [3, 4]), GammaPrior([2, 3], [1, 0.5]),
                                   GaussianPrior([0, 1], [1, 2])], ids=["beta", "gamma", "gauss"])
def test_a_cell_round_trips_through_its_description(prior):
    cell = Cell(TTUCB(), prior, (1.0, 1.0), 0.1, 3, 10)
    back = Cell.from_description(cell.description())
    assert back.prior == prior and type(back.prior) is type(prior)
    assert back.id == cell.id and back.rewards == cell.rewards


def test_a_gaussian_cell_keeps_its_description_keys():
    """The id of every Gaussian cell of an existing store is unchanged: its description has the
    same keys as before the families (no ``prior`` entry)."""
    d = Cell(Elimination(), GaussianPrior.standard(2), (1.0, 1.0), 0.1, 1, 10).description()
    assert "prior" not in d and d["prior_means"] == [0.0, 0.0] and d["prior_stds"] == [1.0, 1.0]


@pytest.mark.parametrize("entry, match", [
    ({"family": "beta", "a": 3}, "give a table"),
    ({"family": "poisson", "a": 3, "b": 1}, "give a table"),
    ({"family": "gamma", "a": 3, "b": 1, "means": 2}, "give a table"),
    ({"family": "beta", "a": -1, "b": 2}, r"grid.prior\[0\].*a must"),
])
def test_bad_family_priors_are_refused_by_key(entry, match):
    config = {"seed": 1, "runs": 2, "grid": {"algorithm": ["ttucb"], "arms": [2],
                                             "delta": [0.1], "prior": [entry]}}
    with pytest.raises(ConfigError, match=match):
        parse_sweep(config)


# ---------------------------------------------------------------------------
# The command line speaks every family


def _cli_run(tmp_path, *prior_args, algorithm="ttucb"):
    from bai_lib.cli import main as cli_main
    out = tmp_path / "store"
    code = cli_main(["run", "--algorithm", algorithm, *prior_args, "--delta", "0.1",
                     "--runs", "12", "--seed", "3", "--out", str(out), "--quiet",
                     "--max-samples", str(CLI_CAP)])
    return code, out


# one of the twelve TTUCB runs on Beta(3, 7)^3 is a near tie of 9e7 samples: capped
CLI_CAP = 200_000


def _same_runs(spec, prior):
    import warnings

    from bai_lib import CensoringWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CensoringWarning)
        return simulate(spec, prior, None, 0.1, 12, 3, max_samples=CLI_CAP, progress=False)


@pytest.mark.parametrize("flag, prior", [
    ("--beta-prior", BetaPrior([3, 3, 3], [7, 7, 7])),
    ("--gamma-prior", GammaPrior([4, 4, 4], [8, 8, 8]))], ids=["beta", "gamma"])
def test_cli_run_takes_a_beta_or_gamma_prior_and_runs_what_simulate_runs(tmp_path, capsys, flag,
                                                                        prior):
    from bai_lib.store import ResultStore
    a, b = prior.a[0], prior.b[0]
    code, out = _cli_run(tmp_path, flag, str(a), str(b), "--arms", "3")
    assert code == 0, capsys.readouterr().err
    assert ("Beta(3, 7)^3" if flag == "--beta-prior" else "Gamma(4, 8)^3") in capsys.readouterr().out
    table = ResultStore(out).table().sort_values("run")
    res = _same_runs(TTUCB(), prior)
    assert np.array_equal(table["tau"].to_numpy(), res.stopping_times)
    assert np.array_equal(table["recommendation"].to_numpy(), res.recommendations)


def test_cli_run_takes_one_pair_per_arm(tmp_path, capsys):
    from bai_lib.store import ResultStore
    code, out = _cli_run(tmp_path, "--beta-prior", "2", "8", "3", "7", algorithm="elimination")
    assert code == 0, capsys.readouterr().err
    res = _same_runs(Elimination(), BetaPrior([2, 3], [8, 7]))
    table = ResultStore(out).table().sort_values("run")
    assert np.array_equal(table["tau"].to_numpy(), res.stopping_times)


@pytest.mark.parametrize("args, needle", [
    (["--beta-prior", "3", "7", "2"], "--beta-prior: give pairs a b"),
    (["--beta-prior", "3", "7"], "--beta-prior: one pair a b needs --arms"),
    (["--gamma-prior", "3", "7", "2", "1", "--arms", "3"], "--arms: 3, but --gamma-prior gives 2"),
    (["--beta-prior", "3", "7", "--gamma-prior", "1", "1", "--arms", "2"], "one prior only"),
    (["--prior-means", "0", "0", "--prior-stds", "1", "1", "--beta-prior", "3", "7"],
     "one prior only"),
    (["--beta-prior", "3", "-7", "--arms", "2"], "b"),
])
def test_cli_bad_family_priors_are_refused_in_one_line(tmp_path, capsys, args, needle):
    code, out = _cli_run(tmp_path, *args)
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1, err
    assert not out.exists()
