"""Sweeps, the result store and the command line (bai_lib.sweep, bai_lib.store, bai_lib.cli)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bai_lib import GaussianPrior, simulate
from bai_lib.cli import main as cli_main
from bai_lib.store import WALL_CLOCK_COLUMNS, Incomplete, ResultStore, missing_ranges
from bai_lib.cell import Cell, ConfigError
from bai_lib.formatting import summary_table
from bai_lib.sweep import load_sweep, parse_sweep, run_sweep

ISSUE_CONFIG = """
seed = 2024
runs = 10000
[grid]
algorithm = ["elimination", "noelim", "ttts"]
arms = [2, 10]          # standard Gaussian prior N(0,1) per arm, unit noise, unless a prior is given
delta = [0.1, 0.01]
"""

# Small enough for CI, long enough (dozens of shards) to be killed in the middle.
SMALL_CONFIG = """
seed = 7
runs = 240
shard_runs = 20
max_samples = 2000000
[grid]
algorithm = ["elimination", {name = "noelim", recommend = "empirical_best"}, "ttts"]
arms = [2, 3]
delta = [0.1, 0.01]
"""


def _values(table):
    """The table without its wall-clock columns (which differ between two runs)."""
    return table.drop(columns=list(WALL_CLOCK_COLUMNS)).reset_index(drop=True)


def _write(tmp_path, text, name="sweep.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture(scope="module")
def straight(tmp_path_factory):
    """The small sweep run once, uninterrupted, with its default local executor."""
    d = tmp_path_factory.mktemp("straight")
    sweep = load_sweep(_write(d, SMALL_CONFIG))
    store = run_sweep(sweep, d / "store", progress=False)
    return sweep, store, store.table()


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


def test_the_issue_config_gives_twelve_cells(tmp_path):
    sweep = load_sweep(_write(tmp_path, ISSUE_CONFIG))
    assert len(sweep.cells) == 12 and sweep.total_runs == 120_000
    names = {(c.algorithm.name, c.prior.k, c.delta) for c in sweep.cells}
    assert len(names) == 12
    assert all(c.seed == 2024 and c.runs == 10_000 and c.noise_stds == (1.0,) * c.prior.k
               for c in sweep.cells)
    assert len(sweep.shards()) == 12 * 10  # default 1000 runs per shard


_GRID = "seed = 1\nruns = {runs}\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1]\n"


@pytest.mark.parametrize("text,needle", [
    ("seed = 1\nrun = 10\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1]",
     "run: unknown key"),
    ("seed = 1\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1]", "runs: missing"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1, 1.5]",
     "grid.delta[1] = 1.5"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elim']\narms=[2]\ndelta=[0.1]",
     "grid.algorithm[0] = 'elim': unknown algorithm"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=[{name='elimination', factor=1}]\narms=[2]\n"
     "delta=[0.1]", "grid.algorithm[0].factor: elimination has no option 'factor'"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=[{name='elimination', delta0_factor=-1}]\narms=[2]"
     "\ndelta=[0.1]", "delta0_factor"),
    ("seed = -1\nruns = 10\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1]",
     "seed = -1"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elimination']\narms=[1]\ndelta=[0.1]",
     "grid.arms[0] = 1"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=['0.1']",
     "grid.delta[0] = '0.1'"),
    ("seed = 1\nruns = 10\nnoise_std = 0\n[grid]\nalgorithm=['elimination']\narms=[2]\n"
     "delta=[0.1]", "noise_std = 0"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elimination']\narms=[2]\ndelta=[0.1]\n"
     "colour=1", "grid.colour: unknown key"),
    ("seed = 1\nruns = 10\n[grid]\nalgorithm=['elimination', 'elimination']\narms=[2]\n"
     "delta=[0.1]", "two cells are identical"),
    ("seed = 1\nruns = [10\n", "not valid TOML"),
    # bounded before any cell is built
    (_GRID.format(runs="1e300"), "runs = 1e+300: runs must be an integer in [1, "),
    (_GRID.format(runs="1000000000000"), "makes 1,000,000,000 shard files, more than"),
    (_GRID.format(runs="10").replace("delta=[0.1]", "delta=[%s]" % ", ".join(
        str(0.001 * (i + 1)) for i in range(500))).replace("arms=[2]", "arms=[%s]" % ", ".join(
            str(i) for i in range(2, 250))), "grid: 124,000 cells, more than 100,000"),
    # impossible grids are refused by name instead of running nothing or part of it
    (_GRID.format(runs="10").replace("algorithm=['elimination']", "algorithm=[]"),
     "grid.algorithm = []: give at least one value"),
    (_GRID.format(runs="10").replace("delta=[0.1]", "delta=[]"), "grid.delta = []"),
    (_GRID.format(runs="10") + "noise_std = []", "grid.noise_std = []"),
    (_GRID.format(runs="10").replace("arms=[2]", "arms=[2, 3]") +
     "prior = [{means=[0, 0], stds=[1, 2]}]", "grid.arms = [2, 3]: no prior of grid.prior has "
     "k = 3"),
    (_GRID.format(runs="10").replace("arms=[2]", "arms=[3]") +
     "prior = [{means=0, stds=1}, {means=[0, 0], stds=[1, 2]}]",
     "grid.prior[1] = {'means': [0, 0], 'stds': [1, 2]}: its k is not in grid.arms = [3]"),
    ("noise_std = [0.5, 2.0]\n" + _GRID.format(runs="10").replace("arms=[2]", "arms=[3]"),
     "noise_std = [0.5, 2.0]: 2 values, one per arm, but the grid has a prior with k = 3"),
    (_GRID.format(runs="10") + "noise_std = [1.0, [0.5, 0]]", "grid.noise_std[1][1] = 0"),
    (_GRID.format(runs="10") + "noise_std = [[2.0]]", "grid.noise_std[0] = [2.0]: a per-arm"),
    (_GRID.format(runs="10") + "means = [[1.0, 0.0, 0.5]]",
     "grid.means[0] = [1.0, 0.0, 0.5]: 3 arms, but the grid's priors have k in [2]"),
    (_GRID.format(runs="10") + "means = [1.0, 0.0]", "grid.means[0] = 1.0: an instance lists"),
])
def test_bad_configs_name_the_key_and_value(tmp_path, text, needle):
    with pytest.raises(ConfigError) as err:
        load_sweep(_write(tmp_path, text))
    msg = str(err.value)
    assert needle in msg and "sweep.toml" in msg
    assert "\n" not in msg  # one line


@pytest.mark.parametrize("name,content", [("big.toml", "# " + "x" * (1 << 20)),
                                          ("bad.toml", b"seed = 1\xff\n")])
def test_a_config_file_is_refused_when_too_large_or_not_text(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError, match=f"{name}: (larger than 1 MiB|not UTF-8 text)"):
        load_sweep(path)


def test_a_device_that_never_ends_is_refused_not_read_forever():
    with pytest.raises(ConfigError, match="/dev/zero: larger than 1 MiB"):
        load_sweep("/dev/zero")


def test_noise_levels_per_arm_and_fixed_instances_make_the_cells_simulate_would(tmp_path):
    """noise_std = [0.5, 2.0] at the top is per arm (it made two cells of one level each);
    grid.noise_std lists levels, each a number or per arm; grid.means fixes the instances."""
    sweep = load_sweep(_write(tmp_path, "seed = 3\nruns = 30\nnoise_std = [0.5, 2.0]\n[grid]\n"
                              "algorithm = ['ttucb']\narms = [2]\ndelta = [0.1]\n"))
    assert [c.noise_stds for c in sweep.cells] == [(0.5, 2.0)]
    sweep = load_sweep(_write(tmp_path, "seed = 3\nruns = 30\n[grid]\nalgorithm = ['ttucb']\n"
                              "delta = [0.1]\nnoise_std = [1.0, [0.5, 2.0]]\n"
                              "means = [[1.0, 0.0], [0.5, 0.0]]\n"))
    assert sorted((c.prior.k, c.noise_stds, c.means) for c in sweep.cells) == [
        (2, (0.5, 2.0), (0.5, 0.0)), (2, (0.5, 2.0), (1.0, 0.0)),
        (2, (1.0, 1.0), (0.5, 0.0)), (2, (1.0, 1.0), (1.0, 0.0))]
    with pytest.raises(ConfigError, match=r"grid.noise_std\[1\] = \[0.5, 2.0\]: 2 values"):
        parse_sweep({"seed": 3, "runs": 30, "grid": {"algorithm": ["ttucb"], "delta": [0.1],
                     "noise_std": [1.0, [0.5, 2.0]], "means": [[1.0, 0.9, 0.0]]}})
    sweep = parse_sweep({"seed": 3, "runs": 30, "shard_runs": 7,
                         "grid": {"algorithm": ["ttucb", "elimination"], "delta": [0.1],
                                  "noise_std": [1.0, [0.5, 2.0]], "means": [[1.0, 0.0]]}})
    store = run_sweep(sweep, tmp_path / "s", progress=False)
    table = store.table()
    for cell in sweep.cells:
        res = simulate(cell.algorithm, cell.prior, np.asarray(cell.noise_stds), cell.delta,
                       cell.runs, cell.seed, means=cell.means, progress=False)
        rows = table[table["config"] == cell.id]
        np.testing.assert_array_equal(rows["tau"].to_numpy(), res.stopping_times)
        assert store.result(cell.id).summary(flat=True)["avg"] == res.summary(flat=True)["avg"]
    summary = store.summary()
    assert sorted(zip(summary["means"], summary["noise"])) == [
        ("1, 0", "0.5, 2"), ("1, 0", "0.5, 2"), ("1, 0", "1"), ("1, 0", "1")]
    assert "noise" in summary_table(store, "csv").splitlines()[0]


def test_cells_drawing_their_means_keep_their_ids():
    """A cell without fixed means is described without a means key, so its id (the store's
    directory name) is the one earlier stores used."""
    from bai_lib.algorithms import Elimination

    cell = Cell(Elimination(), GaussianPrior.standard(2), (1.0, 1.0), 0.1, 7, 240, 2000000)
    assert "means" not in cell.description() and cell.id == "84143d3293db"
    assert Cell.from_description(cell.description()) == cell


def test_cell_ids_are_stable_and_shard_size_free():
    a = parse_sweep({"seed": 1, "runs": 10, "shard_runs": 3,
                     "grid": {"algorithm": ["ttts"], "arms": [2], "delta": [0.1]}})
    b = parse_sweep({"seed": 1, "runs": 10, "shard_runs": 5,
                     "grid": {"algorithm": ["ttts", "elimination"], "arms": [2, 4],
                              "delta": [0.1]}})
    assert a.cells[0].id in {c.id for c in b.cells}
    c = parse_sweep({"seed": 2, "runs": 10, "grid": {"algorithm": ["ttts"], "arms": [2],
                                                     "delta": [0.1]}})
    assert c.cells[0].id != a.cells[0].id
    d = a.cells[0].description()
    assert Cell.from_description(d) == a.cells[0]
    assert [(f, s) for _, f, s in a.shards()] == [(0, 3), (3, 6), (6, 9), (9, 10)]


def test_missing_ranges():
    assert missing_ranges(10, []) == [(0, 10)]
    assert missing_ranges(10, [(0, 3), (6, 8)]) == [(3, 6), (8, 10)]
    assert missing_ranges(10, [(0, 10)]) == []


# ---------------------------------------------------------------------------
# Store
# ---------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
def test_store_rows_equal_one_simulate_call(straight):
    sweep, store, table = straight
    assert len(table) == sweep.total_runs
    for cell in sweep.cells:
        res = simulate(cell.algorithm, cell.prior, np.asarray(cell.noise_stds), cell.delta,
                       cell.runs, cell.seed, max_samples=cell.max_samples, progress=False)
        rows = table[table["config"] == cell.id].reset_index(drop=True)
        direct = res.to_frame()
        for col in direct.columns:
            if col != "seconds":
                np.testing.assert_array_equal(rows[col].to_numpy(), direct[col].to_numpy(),
                                              err_msg=col)
        assert (rows["algorithm"] == cell.algorithm.label).all()
        # ... and reads back into the same summary the chapters use
        back = store.result(cell.id).summary(flat=True)
        want = res.summary(flat=True)
        back.pop("mean_seconds"), want.pop("mean_seconds")
        assert back == want


def test_shard_size_does_not_change_the_table(straight, tmp_path):
    sweep, _, table = straight
    other = parse_sweep({"seed": 7, "runs": 240, "shard_runs": 33, "max_samples": 2000000,
                         "grid": {"algorithm": ["elimination"], "arms": [2, 3],
                                  "delta": [0.1, 0.01]}})
    store = run_sweep(other, tmp_path / "s", progress=False, n_threads=1)
    got = store.table()
    want = table[table["config"].isin(got["config"].unique())]
    pd.testing.assert_frame_equal(_values(got), _values(want))
    assert store.shards(other.cells[0].id)[:2] == [(0, 33), (33, 66)]


def test_incomplete_cells_are_never_read_as_complete(straight, tmp_path):
    sweep, _, _ = straight
    cell = sweep.cells[0]
    store = ResultStore(tmp_path / "s")
    run_sweep(parse_sweep({"seed": 7, "runs": 40, "shard_runs": 20,
                           "grid": {"algorithm": ["ttts"], "arms": [2], "delta": [0.1]}}),
              store, progress=False)
    (cid,) = store.cells()
    os.remove(store.path / f"config={cid}" / "runs-000000020-000000040.parquet")
    (store.path / f"config={cid}" / ".runs-000000020-000000040.parquet.x.tmp").write_bytes(b"x")
    assert store.incomplete() == {cid: Incomplete(20, 40)}
    assert store.table().empty and store.summary().empty
    assert len(store.table(complete_only=False)) == 20
    with pytest.raises(ValueError, match="runs 20..39 are missing"):
        store.result(cid)
    assert cell.id not in store.cells()


def test_summary_formats(straight, capsys):
    _, store, _ = straight
    csv = summary_table(store, "csv")
    df = pd.read_csv(pd.io.common.StringIO(csv))
    assert len(df) == 12 and {"avg", "error", "error_lo", "error_hi"} <= set(df.columns)
    md = summary_table(store, "markdown").splitlines()
    assert md[0].startswith("| config |") and md[1].startswith("|---") and len(md) == 14
    assert "%" in md[2] and "[" in md[2] and "e+" not in "".join(md)
    with pytest.raises(ValueError, match="format"):
        summary_table(store, "html")


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def test_cli_run_and_summary(tmp_path, capsys):
    out = tmp_path / "st"
    code = cli_main(["run", "--algorithm", "elimination", "--arms", "10", "--delta", "0.01",
                     "--runs", "60", "--seed", "2024", "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "Alg. 1 (elimination)" in printed and "60" in printed
    assert cli_main(["summary", str(out), "--format", "csv"]) == 0
    df = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    res = simulate("elimination", GaussianPrior.standard(10), 1.0, 0.01, 60, 2024,
                   progress=False)
    assert df["avg"].iloc[0] == pytest.approx(res.stopping_times.mean())
    assert df["n_runs"].iloc[0] == 60
    # the same command again computes nothing and prints the same table
    assert cli_main(["run", "--algorithm", "elimination", "--arms", "10", "--delta", "0.01",
                     "--runs", "60", "--seed", "2024", "--out", str(out), "--quiet"]) == 0
    assert capsys.readouterr().out == printed


@pytest.mark.parametrize("argv,needle", [
    (["run", "--algorithm", "ucb", "--arms", "2", "--delta", "0.1", "--runs", "5", "--seed",
      "1", "--out", "X"], "unknown algorithm"),
    (["run", "--algorithm", "ttts", "--arms", "2", "--delta", "2", "--runs", "5", "--seed",
      "1", "--out", "X"], "grid.delta[0] = 2.0"),
    (["run", "--algorithm", "ttts", "--delta", "0.1", "--runs", "5", "--seed", "1", "--out",
      "X"], "--arms"),
    (["run", "--algorithm", "elimination", "--option", "delta0_factr=1", "--arms", "2",
      "--delta", "0.1", "--runs", "5", "--seed", "1", "--out", "X"], "delta0_factr"),
    (["run", "--algorithm", "ttts", "--arms", "2", "--delta", "0.1", "--runs", "five"],
     "--runs: invalid int value"),
    (["sweep", "missing.toml", "--out", "X"], "missing.toml: cannot read"),
    (["sweep", "missing.toml", "--out", "X", "--scheduler", "tcp://1.2.3.4:1"],
     "--scheduler: needs --executor dask"),
    (["summary", "nowhere"], "no result store"),
    (["run", "--algorithm", "elimination", "--option", "name=ttucb", "--arms", "2", "--delta",
      "0.1", "--runs", "5", "--seed", "1", "--out", "X"],
     "--option name=...: the algorithm is --algorithm elimination"),
    (["run", "--algorithm", "elimination", "--arms", "2", "--delta", "0.1", "--runs",
      "1000000000000", "--seed", "1", "--out", "X"], "1,000,000,000 shard files"),
])
def test_cli_errors_are_one_line_naming_the_argument(tmp_path, capsys, monkeypatch, argv,
                                                      needle):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if "five" in argv else _no_raise():
        code = cli_main(argv)
        assert code == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err
    assert not (tmp_path / "X").exists()


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("command", [[], ["run"], ["sweep"], ["summary"]])
def test_every_command_has_help(command, capsys):
    """In this process (``python -m bai_lib --help`` in a new one: test_packaging.py)."""
    with pytest.raises(SystemExit) as done:
        cli_main([*command, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0 and out.startswith("usage: bai-lib")
    assert "--out" in out or command in ([], ["summary"])


# ---------------------------------------------------------------------------
# Interrupted and resumed; Dask
# ---------------------------------------------------------------------------


def _sweep_process(config, store, *extra):
    return subprocess.Popen([sys.executable, "-m", "bai_lib", "sweep", str(config), "--out",
                             str(store), "--quiet", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _wait_for_shards(store, at_least, proc, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        n = sum(len(list(d.glob("runs-*.parquet"))) for d in Path(store).glob("config=*"))
        if n >= at_least or proc.poll() is not None:
            return n
        time.sleep(0.05)
    raise AssertionError("the sweep wrote no shards")


def test_killed_twice_and_resumed_equals_a_straight_sweep(straight, tmp_path):
    sweep, _, table = straight
    config = _write(tmp_path, SMALL_CONFIG)
    store = tmp_path / "store"
    n_shards = len(sweep.shards())
    seen = []
    for at_least, sig in ((3, signal.SIGKILL), (n_shards // 2, signal.SIGKILL)):
        proc = _sweep_process(config, store)
        seen.append(_wait_for_shards(store, at_least, proc))
        assert proc.poll() is None, "the sweep finished before it could be killed"
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert proc.returncode == -sig
    done_before = sum(len(ResultStore(store).shards(c.id)) for c in sweep.cells)
    assert 0 < done_before < n_shards
    proc = _sweep_process(config, store)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    got = ResultStore(store).table()
    pd.testing.assert_frame_equal(_values(got), _values(table))
    assert not list(Path(store).rglob("*.tmp"))


def test_ctrl_c_stops_a_sweep_quickly_and_it_resumes(straight, tmp_path):
    sweep, _, table = straight
    config = _write(tmp_path, SMALL_CONFIG)
    store = tmp_path / "store"
    proc = _sweep_process(config, store)
    _wait_for_shards(store, 2, proc)
    assert proc.poll() is None
    t0 = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    latency = time.perf_counter() - t0
    assert proc.returncode == 130 and "run the same sweep again" in err, err
    assert latency < 5.0  # typically well under a second (one kernel buffer refill)
    assert cli_main(["sweep", str(config), "--out", str(store), "--quiet"]) == 0
    pd.testing.assert_frame_equal(_values(ResultStore(store).table()), _values(table))


def test_dask_cluster_gives_the_same_store(straight, tmp_path):
    """Through a scheduler address (as on a real cluster: two single-threaded worker processes
    on 127.0.0.1, rows sent back and written by the client) the table equals the local one."""
    distributed = pytest.importorskip("dask.distributed")
    sweep, _, table = straight
    config = _write(tmp_path, SMALL_CONFIG)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        code = cli_main(["sweep", str(config), "--out", str(tmp_path / "dask"), "--quiet",
                         "--executor", "dask", "--scheduler", cluster.scheduler_address])
    assert code == 0
    pd.testing.assert_frame_equal(_values(ResultStore(tmp_path / "dask").table()), _values(table))


def test_dask_default_local_cluster(straight, tmp_path):
    """Without a scheduler, executor='dask' starts its own LocalCluster (one worker here, and a
    shard size the straight sweep did not use)."""
    pytest.importorskip("dask.distributed")
    _, _, table = straight
    sweep = parse_sweep({"seed": 7, "runs": 240, "shard_runs": 70, "max_samples": 2000000,
                         "grid": {"algorithm": ["ttts"], "arms": [3], "delta": [0.01]}})
    store = run_sweep(sweep, tmp_path / "dask1", executor="dask", n_workers=1, progress=False)
    want = table[table["config"] == sweep.cells[0].id]
    pd.testing.assert_frame_equal(_values(store.table()), _values(want))


def test_the_example_grid_parses():
    sweep = load_sweep(Path(__file__).resolve().parents[1] / "examples" / "sweep_grid.toml")
    assert len(sweep.cells) == 48 and sweep.total_runs == 480_000
    assert {c.algorithm.name for c in sweep.cells} == {"elimination", "noelim", "ttts", "ttucb"}


def test_a_restart_removes_what_a_killed_writer_left(tmp_path):
    sweep = parse_sweep({"seed": 3, "runs": 20, "shard_runs": 10,
                         "grid": {"algorithm": ["elimination"], "arms": [2], "delta": [0.1]}})
    store = run_sweep(sweep, tmp_path / "s", progress=False)
    cid = sweep.cells[0].id
    stale = store.path / f"config={cid}" / ".runs-000000010-000000020.parquet.abc.tmp"
    stale.write_bytes(b"half a parquet file")
    assert store.remove_partial() == 1 and not stale.exists()
    (store.path / "config=0123456789ab").mkdir()  # a cell directory without temporary files
    for name in (".a.tmp", ".b.tmp", ".c.tmp"):
        (stale.parent / name).write_bytes(b"x")
    assert store.remove_partial() == 3  # the files removed, not the directories looked at
    stale.write_bytes(b"half a parquet file")
    run_sweep(sweep, store, progress=False)
    assert not stale.exists() and len(store.table()) == 20


def _edited_store(tmp_path, edit):
    store = ResultStore(tmp_path / "s")
    run_sweep(parse_sweep({"seed": 7, "runs": 20, "shard_runs": 20,
                           "grid": {"algorithm": ["ttucb"], "arms": [2], "delta": [0.1]}}),
              store, progress=False)
    (cid,) = store.cells()
    path = store.path / f"config={cid}" / "cell.json"
    edit(path)
    return store, path


def _set(key, value):
    def edit(path):
        d = json.loads(path.read_text())
        if value is KeyError:
            del d[key]
        else:
            d[key] = value
        path.write_text(json.dumps(d))
    return edit


@pytest.mark.parametrize("edit, needle", [
    (_set("runs", "x"), "not a cell description"),
    (_set("options", {"speed": 2}), "not a cell description"),
    (_set("algorithm", "ucb"), "not a cell description .missing key 'ucb'"),
    (_set("seed", KeyError), "not a cell description .missing key 'seed'"),
    (lambda p: p.write_text("[1, 2]"), "a cell description is a JSON object, got list"),
    (lambda p: p.write_text(p.read_text()[:30]), "not readable as JSON"),
    (lambda p: p.write_text(""), "not readable as JSON"),
    (_set("runs", 10), r"describes cell [0-9a-f]{12}, not"),       # edited, still valid
    (_set("algorithm", "tas"), r"describes cell [0-9a-f]{12}, not"),
])
def test_a_hand_edited_cell_json_is_refused_in_one_line_naming_it(tmp_path, capsys, edit,
                                                                   needle):
    store, path = _edited_store(tmp_path, edit)
    with pytest.raises(ValueError, match=needle) as info:
        store.summary()
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert cli_main(["summary", str(store.path)]) != 0
    err = capsys.readouterr().err
    assert str(path) in err and "Traceback" not in err


def test_the_store_refuses_a_symbolic_link_among_its_cells(tmp_path):
    """A config=... link to elsewhere would have the store write and delete files there."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    keep = elsewhere / ".precious.tmp"
    keep.write_text("not the store's")
    store = ResultStore(tmp_path / "s")
    store.path.mkdir()
    (store.path / "config=0123456789ab").symlink_to(elsewhere, target_is_directory=True)
    for action in (store.remove_partial, store.cells,
                   lambda: store.add_cell("0123456789ab", {"runs": 1})):
        with pytest.raises(ValueError, match="config=0123456789ab: a symbolic link inside"):
            action()
    assert keep.read_text() == "not the store's"
    assert sorted(p.name for p in elsewhere.iterdir()) == [".precious.tmp"]


def _one_cell_sweep():
    return parse_sweep({"seed": 7, "runs": 20, "shard_runs": 20,
                        "grid": {"algorithm": ["ttucb"], "arms": [2], "delta": [0.1]}})


@pytest.mark.parametrize("target_exists", [False, True])
def test_the_store_refuses_a_symbolic_link_as_its_writer_lock(tmp_path, target_exists):
    """Opening .writer.lock followed a link: a sweep created (or opened) a file outside."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "lock"
    if target_exists:
        target.write_text("not the store's")
    store = ResultStore(tmp_path / "s")
    store.path.mkdir()
    (store.path / ".writer.lock").symlink_to(target)
    with pytest.raises(ConfigError, match=r"\.writer\.lock: a symbolic link inside the result "
                       "store"):
        run_sweep(_one_cell_sweep(), store, progress=False)
    assert [p.name for p in elsewhere.iterdir()] == (["lock"] if target_exists else [])
    if target_exists:
        assert target.read_text() == "not the store's"
    assert not list(store.path.glob("config=*"))  # refused before anything is written


def test_the_store_refuses_a_symbolic_link_as_its_set_aside_reasons(tmp_path):
    """set-aside/reasons.txt was appended to through a link, to a file outside the store."""
    outside = tmp_path / "outside.txt"
    store = run_sweep(_one_cell_sweep(), tmp_path / "s", progress=False)
    (cid,) = store.cells()
    shard = store._shard_path(cid, 0, 20)
    shard.write_bytes(b"damaged")
    (shard.parent / "set-aside").mkdir()
    (shard.parent / "set-aside" / "reasons.txt").symlink_to(outside)
    with pytest.raises(ConfigError, match="reasons.txt: a symbolic link inside the result store"):
        run_sweep(_one_cell_sweep(), store, progress=False)
    assert not outside.exists() and shard.read_bytes() == b"damaged"  # nothing moved


def test_a_sweep_reads_each_cell_json_a_bounded_number_of_times(tmp_path, monkeypatch):
    """Each cell's check read every cell.json of the store: n**2 reads per start (1,000 cells
    took about 5 minutes before any shard was computed). Start-up is linear in the cells."""
    n = 40
    sweep = parse_sweep({"seed": 7, "runs": 1, "shard_runs": 1, "max_samples": 10_000,
                         "grid": {"algorithm": ["ttucb"], "arms": [2],
                                  "delta": [0.001 * (i + 1) for i in range(n)]}})
    reads = []
    read_text = Path.read_text

    def counted(self, *args, **kwargs):
        if self.name == "cell.json":
            reads.append(self)
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counted)
    store = run_sweep(sweep, tmp_path / "s", progress=False)  # a new store
    first = len(reads)
    reads.clear()
    run_sweep(sweep, store, progress=False)  # every shard on disk: start-up only
    again = len(reads)
    reads.clear()
    assert len(store.summary()) == n
    assert 0 < first <= 2 * n and 0 < again <= 2 * n and len(reads) == n, (first, again,
                                                                           len(reads))


def test_an_empty_out_is_refused(capsys):
    for command in (["run", "--algorithm", "ttts", "--arms", "2", "--delta", "0.1", "--runs",
                     "5", "--seed", "1", "--out", ""], ["sweep", "x.toml", "--out", " "]):
        with pytest.raises(SystemExit) as info:
            cli_main(command)
        assert info.value.code == 2
        assert "--out: give a directory for the result store" in capsys.readouterr().err


def test_summary_notes_and_rows_come_from_one_look_at_the_store(tmp_path, capsys, monkeypatch):
    """A sweep completing a cell while summary reads: the note 'incomplete, left out' and the
    table must agree (it said left out, then printed the row)."""
    store = ResultStore(tmp_path / "s")
    run_sweep(parse_sweep({"seed": 7, "runs": 40, "shard_runs": 20,
                           "grid": {"algorithm": ["ttucb"], "arms": [2], "delta": [0.1]}}),
              store, progress=False)
    (cid,) = store.cells()
    full = ResultStore.shards
    looks = []

    def growing(self, config):  # the first two looks see half the shards, later looks all
        looks.append(config)
        return full(self, config)[:1] if len(looks) <= 2 else full(self, config)

    monkeypatch.setattr(ResultStore, "shards", growing)
    assert cli_main(["summary", str(store.path), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    noted = f"config {cid} is incomplete" in err
    listed = cid in out
    assert noted != listed, (out, err)


def test_a_second_writer_is_refused_while_the_first_holds_the_store(tmp_path):
    """Two sweeps into one store: each start-up cleanup deleted the other's temporary files."""
    store = ResultStore(tmp_path / "s")
    sweep = parse_sweep({"seed": 7, "runs": 20, "shard_runs": 20,
                         "grid": {"algorithm": ["ttucb"], "arms": [2], "delta": [0.1]}})
    with store.writer():
        partial = store.path / "config=0123456789ab" / ".runs-000000000-000000020.parquet.x.tmp"
        partial.parent.mkdir(parents=True)
        partial.write_bytes(b"being written")
        with pytest.raises(ValueError, match="another sweep is writing to it"):
            run_sweep(sweep, ResultStore(store.path), progress=False)
        assert partial.read_bytes() == b"being written"  # the first writer's file survives
    run_sweep(sweep, store, progress=False)  # free again once the first writer is done
    assert len(store.table()) == 20


@pytest.mark.parametrize("absent, executor", [(("pyarrow",), "local"),
                                              (("pandas", "pyarrow"), "local"),
                                              (("dask",), "dask")])
def test_a_missing_scale_module_is_named_before_any_work(tmp_path, monkeypatch, capsys, absent,
                                                         executor):
    """Without the ``scale`` extra, ``bai-lib run`` used to simulate for most of a minute and
    only then fail to write its store: now the command and ``run_sweep`` refuse at once, naming
    every missing module and the extra, and nothing is simulated or written."""
    import importlib.util

    import bai_lib.sweep as sweep_module
    real = importlib.util.find_spec

    def find_spec(name, *args):
        if name.split(".")[0] in absent:
            return None
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(sweep_module, "run_shard", lambda *a, **k: pytest.fail("simulated"))
    need = ", ".join(n for n in sweep_module.SCALE_MODULES[executor] if n.split(".")[0] in absent)
    out = tmp_path / "store"
    if executor == "local":
        assert cli_main(["run", "--algorithm", "elimination", "--arms", "2", "--delta", "0.1",
                         "--runs", "10", "--seed", "1", "--out", str(out), "--quiet"]) == 2
        assert capsys.readouterr().err == (f"bai-lib run: error: sweeps and bai-lib "
                                           f"run/sweep/summary need {need}, not installed: pip "
                                           f"install 'bai_lib[scale]'\n")
    sweep = parse_sweep({"seed": 1, "runs": 10, "grid": {"algorithm": ["elimination"],
                                                          "arms": [2], "delta": [0.1]}}, "test")
    with pytest.raises(ImportError, match=rf"^sweeps and .* need {need}, not installed: pip "
                                          r"install 'bai_lib\[scale\]'$"):
        run_sweep(sweep, out, executor=executor)
    assert not out.exists()
