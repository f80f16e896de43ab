"""The result store proves its completeness: each shard's manifest (cell, run range, row count,
content hash) is verified on every read, and a sweep sets aside and recomputes a shard that
fails (bai_lib.store)."""

import json
import shutil
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bai_lib.cli import main as cli_main
from bai_lib.store import (MANIFEST_KEY, WALL_CLOCK_COLUMNS, Incomplete, ResultStore,
                           content_hash)
from bai_lib.sweep import ShardWarning, parse_sweep, run_sweep

CONFIG = {"seed": 7, "runs": 40, "shard_runs": 20,
          "grid": {"algorithm": ["ttucb", "elimination"], "arms": [2], "delta": [0.1]}}


def _values(table):
    return table.drop(columns=list(WALL_CLOCK_COLUMNS)).reset_index(drop=True)


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The sweep run once, untouched: its directory and its table."""
    d = tmp_path_factory.mktemp("clean") / "store"
    store = run_sweep(parse_sweep(CONFIG), d, progress=False)
    return d, store.table()


def _copy(clean, tmp_path):
    shutil.copytree(clean[0], tmp_path / "store")
    store = ResultStore(tmp_path / "store")
    a, b = sorted(store.cells())
    return store, a, b


def _rewrite(path, fn):
    """Replace the shard at ``path`` by ``fn(table)``, keeping its metadata (the manifest)."""
    table = pq.read_table(path)
    pq.write_table(fn(table).replace_schema_metadata(table.schema.metadata), path)


def _edit_tau(table):
    i = table.column_names.index("tau")
    tau = table.column("tau").to_numpy().copy()
    tau[3] += 1
    return table.set_column(i, "tau", pa.array(tau))


def _short(store, a, b):
    _rewrite(store._shard_path(a, 20, 40), lambda t: t.slice(0, 10))
    return a, "runs-000000020-000000040.parquet", "10 rows, 20 expected"


def _foreign(store, a, b):
    shutil.copy(store._shard_path(b, 0, 20), store._shard_path(a, 0, 20))
    return a, "runs-000000000-000000020.parquet", f"a shard of config {b}"


def _edited(store, a, b):
    _rewrite(store._shard_path(a, 0, 20), _edit_tau)
    return a, "runs-000000000-000000020.parquet", "its values differ"


def _renamed(store, a, b):
    shutil.copy(store._shard_path(a, 0, 20), store._shard_path(a, 20, 40))
    return a, "runs-000000020-000000040.parquet", "its manifest holds runs 0..19"


def _garbage(store, a, b):
    store._shard_path(a, 0, 20).write_bytes(b"PAR1 not really")
    return a, "runs-000000000-000000020.parquet", "not readable as Parquet"


def _no_manifest(store, a, b):
    path = store._shard_path(a, 0, 20)
    pq.write_table(pq.read_table(path).replace_schema_metadata(None), path)
    return a, "runs-000000000-000000020.parquet", "no manifest"


def _beyond(store, a, b):
    shutil.copy(store._shard_path(a, 20, 40), store._shard_path(a, 20, 40).with_name(
        "runs-000000040-000000060.parquet"))
    return a, "runs-000000040-000000060.parquet", "runs 40..59 are not runs of this cell"


def _flip(path, at, bit=0x80):
    """Flip one bit of byte ``at`` of the file at ``path``."""
    data = bytearray(path.read_bytes())
    data[at] ^= bit
    path.write_bytes(bytes(data))


def _footer_start(data):
    """Offset of a Parquet file's footer (its length is stored before the closing PAR1)."""
    return len(data) - 8 - int.from_bytes(data[-8:-4], "little")


def _flipped_header(store, a, b):
    _flip(store._shard_path(a, 0, 20), 0)  # the leading magic bytes, which pyarrow skips
    return a, "runs-000000000-000000020.parquet", "not readable as Parquet (its first bytes"


def _flipped_footer(store, a, b):
    path = store._shard_path(a, 0, 20)
    data = path.read_bytes()
    at = data.index(b"stop_reason", _footer_start(data))  # a column name in the footer
    _flip(path, at)
    return a, "runs-000000000-000000020.parquet", "not readable as Parquet (UnicodeDecodeError"


def _flipped_data(store, a, b):
    path = store._shard_path(a, 0, 20)
    data = path.read_bytes()
    at = data.index(a.encode())  # the config column's first string value
    assert at < _footer_start(data)
    _flip(path, at)
    return a, "runs-000000000-000000020.parquet", "not decodable (UnicodeDecodeError"


def _flipped_manifest(store, a, b):
    path = store._shard_path(a, 0, 20)
    at = path.read_bytes().index(b'"sha256": "') + 12  # a hex digit of the recorded hash
    _flip(path, at, 0x01)
    return a, "runs-000000000-000000020.parquet", "its two copies of the manifest differ"


FAULTS = [_short, _foreign, _edited, _renamed, _garbage, _no_manifest, _beyond,
          _flipped_header, _flipped_footer, _flipped_data, _flipped_manifest]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.__name__[1:])
def test_a_faulty_shard_is_named_left_out_set_aside_and_recomputed(clean, tmp_path, fault,
                                                                   capsys):
    store, a, b = _copy(clean, tmp_path)
    assert store.check(a) == [] and store.check(b) == []
    summary_before = store.summary()
    cid, name, reason = fault(store, a, b)
    bad = store._shard_path(cid, 0, 1).with_name(name)
    before = bad.read_bytes()

    (problem,) = store.check(cid)
    assert problem.path == bad and reason in problem.reason
    status = store.incomplete()[cid]
    assert isinstance(status, Incomplete) and status.problems == (problem,)
    left_out = {}
    summary = store.summary(left_out)
    assert left_out == {cid: status}
    assert cid not in set(store.table()["config"])
    pd.testing.assert_frame_equal(  # the other cell's row, unchanged
        summary, summary_before[summary_before["config"] != cid].reset_index(drop=True))
    with pytest.raises(ValueError, match=reason.split("(")[0][:20]):
        store.result(cid)

    assert cli_main(["summary", str(store.path), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert cid not in out and f"config {cid}: shard {name}: {reason}" in err

    with pytest.warns(ShardWarning, match=f"shard {name}: .*moved to .*set-aside"):
        run_sweep(parse_sweep(CONFIG), store, progress=False)
    aside = bad.parent / "set-aside"
    assert (aside / f"{name}.1").read_bytes() == before  # kept, never deleted
    assert reason in (aside / "reasons.txt").read_text()
    assert store.check(cid) == [] and not store.incomplete()
    pd.testing.assert_frame_equal(_values(store.table()), _values(clean[1]))
    pd.testing.assert_frame_equal(store.summary().drop(columns="mean_seconds"),
                                  summary_before.drop(columns="mean_seconds"))


def test_no_flipped_byte_stops_a_read(clean, tmp_path):
    """One flipped bit anywhere in a shard (every 16th byte here): the shard either verifies,
    its values exactly the recorded ones, or is named; reading never raises (a damaged string
    or column name raised UnicodeDecodeError, and summary and sweep stopped naming no file)."""
    store, a, b = _copy(clean, tmp_path)
    path = store._shard_path(a, 0, 20)
    data = path.read_bytes()
    want = _values(clean[1][clean[1]["config"] == a])
    named = 0
    for at in range(0, len(data), 16):
        flipped = bytearray(data)
        flipped[at] ^= 0x80
        path.write_bytes(bytes(flipped))
        problems = store.check(a)
        if problems:
            (problem,) = problems
            assert problem.path == path and problem.reason, at
            named += 1
        else:
            pd.testing.assert_frame_equal(_values(store.table(a)), want)
    assert named > len(data) // 32  # most flips are seen


def test_a_cell_without_its_cell_json_is_named_not_dropped(clean, tmp_path, capsys):
    store, a, b = _copy(clean, tmp_path)
    description = store.path / f"config={a}" / "cell.json"
    description.unlink()
    b_description = (store.path / f"config={b}" / "cell.json").read_text()

    left_out = {}
    assert list(store.summary(left_out)["config"]) == [b]
    (problem,) = left_out[a].problems
    assert problem.path == description and problem.reason.startswith("missing")
    assert store.incomplete() == left_out
    with pytest.raises(ValueError, match=f"config '{a}': .*cell.json is missing"):
        store.check(a)
    assert cli_main(["summary", str(store.path), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert a not in out and b in out
    assert f"config {a}: cell.json: missing (the cell's description: without it its 2 " \
           "shard file(s) cannot be verified" in err
    assert "shard cell.json" not in err and "set the shard aside" not in err

    (store.path / f"config={b}" / "cell.json").unlink()  # no cell described: still a store
    assert cli_main(["summary", str(store.path), "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert f"config {a}: cell.json: missing" in err and f"config {b}: cell.json: missing" in err
    (store.path / f"config={b}" / "cell.json").write_text(b_description)

    run_sweep(parse_sweep(CONFIG), store, progress=False)  # writes it again; its shards verify
    assert description.is_file() and not store.incomplete()
    assert not (description.parent / "set-aside").exists()
    pd.testing.assert_frame_equal(store.table(), clean[1])  # the same files, wall clock too


def test_the_cli_sweep_reports_a_set_aside_shard_in_one_line(clean, tmp_path, capsys):
    store, a, b = _copy(clean, tmp_path)
    _, name, reason = _short(store, a, b)
    config = tmp_path / "sweep.toml"
    config.write_text('seed = 7\nruns = 40\nshard_runs = 20\n[grid]\n'
                      'algorithm = ["ttucb", "elimination"]\narms = [2]\ndelta = [0.1]\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the CLI shows the warning itself, as one line
        assert cli_main(["sweep", str(config), "--out", str(store.path), "--quiet"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"bai-lib sweep: warning: config {a}: shard "
                                               f"{name}: {reason}")


def test_the_manifest_records_the_cell_range_rows_and_hash(clean):
    store = ResultStore(clean[0])
    for cid in store.cells():
        for first, stop in store.shards(cid):
            table = pq.read_table(store._shard_path(cid, first, stop))
            manifest = json.loads(table.schema.metadata[MANIFEST_KEY])
            assert manifest == {"config": cid, "first": first, "stop": stop,
                                "rows": stop - first, "sha256": content_hash(table)}


def test_the_content_hash_ignores_the_wall_clock_and_sees_every_other_value(clean):
    store = ResultStore(clean[0])
    cid = sorted(store.cells())[0]
    table = pq.read_table(store._shard_path(cid, 0, 20))
    h = content_hash(table)
    for name in WALL_CLOCK_COLUMNS:
        i = table.column_names.index(name)
        assert content_hash(table.set_column(i, name, pa.array([9.0] * 20))) == h
    assert content_hash(_edit_tau(table)) != h
    i = table.column_names.index("stop_reason")
    other = ["x"] + table.column("stop_reason").to_pylist()[1:]
    assert content_hash(table.set_column(i, "stop_reason", pa.array(other))) != h
