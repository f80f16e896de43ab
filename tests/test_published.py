"""The published values are recorded consistently (Tables 3/4 repeat Tables 1/2)."""

import pytest

from bai_lib import published


def test_extended_tables_repeat_main_tables():
    for main, ext in [(1, 3), (2, 4)]:
        assert set(published.TABLES[main]) == set(published.TABLES[ext])
        for alg, r in published.TABLES[main].items():
            e = published.TABLES[ext][alg]
            assert (r.avg, r.max, r.error) == (e.avg, e.max, e.error)
            assert r.comp is None and e.comp is not None and e.comp > 0


def test_rows_are_sane():
    for t in published.TABLES.values():
        for r in t.values():
            assert 0 <= r.error < 0.1
            assert r.max >= r.avg > 0


def test_experiment_settings_name_their_tables():
    for exp in published.EXPERIMENTS.values():
        for t in exp["tables"]:
            assert set(published.TABLES[t]) == set(exp["algorithms"])


def test_row_validation():
    assert published.row(1, "ttts").max == 1.09e8
    with pytest.raises(ValueError, match="table"):
        published.row(7, "ttts")
    with pytest.raises(ValueError, match="algorithm"):
        published.row(2, "ttts")


def test_swapped_reading_exchanges_avg_max_comp_but_not_error():
    for t in (1, 3):
        for a, b in [("ttts", "ttucb"), ("ttucb", "ttts")]:
            s, p = published.row(t, a, "swapped"), published.row(t, b)
            assert (s.avg, s.max, s.comp) == (p.avg, p.max, p.comp)
            assert s.error == published.row(t, a).error
        assert published.row(t, "elimination", "swapped") == published.row(t, "elimination")
    assert published.row(1, "ttts", "swapped").avg == 1.95e5
    with pytest.raises(ValueError, match="reading"):
        published.row(1, "ttts", "mirrored")
    with pytest.raises(ValueError, match="Tables 1 and 3"):
        published.row(2, "elimination", "swapped")


def test_experiment3_setting_is_complete():
    e = published.EXPERIMENT3
    for key in ("prior_means", "prior_stds", "noise_stds"):
        assert len(e[key]) == e["k"] == 10
    assert all(0.5 <= x <= 1.5 for x in e["prior_stds"] + e["noise_stds"])
    assert set(published.EXPERIMENT3_OUTPUTS) == {"elimination", "ttucb"}


def test_glue_values_cover_every_published_number_under_both_readings():
    v = published.glue_values((1, 3, 2))
    assert v["pub_t1_ttts_avg"] == 1.56e5 and v["pub_t1_ttts_avg_swapped"] == 1.95e5
    assert v["pub_t3_ttucb_comp_swapped"] == 27.6 and v["pub_t3_ttucb_comp"] == 5.07
    assert v["pub_t3_ttucb_comp_ms_swapped"] == pytest.approx(27_600)
    assert v["pub_t3_elimination_comp_ms"] == pytest.approx(1e3 * v["pub_t3_elimination_comp"])
    assert v["pub_t2_noelim_error"] == 0.0 and "pub_t2_noelim_error_swapped" not in v
    assert "pub_t1_ttts_comp" not in v
    assert len(v) == 3 * 3 * 2 + 3 * 5 * 2 + 2 * 3
    with pytest.raises(ValueError, match="table"):
        published.glue_values((5,))
