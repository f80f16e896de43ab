"""Re-executing notebooks is diff-free, and test runs never write the tracked results.

- ``scripts/execute_notebooks.py`` keeps the stored outputs (and CSVs) of unchanged wall-clock
  cells, so re-running it with no source change rewrites nothing; ``--refresh-timings`` renews them;
- ``write_csv`` / ``results_path`` honour ``BAI_LIB_RESULTS_DIR`` (nbval runs set it);
- ``compare_results`` names every results file that no longer reproduces.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from bai_lib import experiments
from bai_lib.experiments import results_path, write_csv

HEADER = """\
---
jupytext:
  formats: ipynb,md:myst
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  name: python3
  display_name: Python 3
  language: python
---

# A synthetic chapter
"""

DETERMINISTIC_CELL = """
```{code-cell} ipython3
import time

with open("../results/99_table.csv", "w") as fh:
    fh.write("x,y\\n1,2\\n")
print("deterministic")
time.sleep(0.5)  # longer than the kernel's stdout flush interval: the prints arrive split
print("still deterministic")
```
"""

TIMING_CELL = """
Wall-clock time, which changes between executions.

```{code-cell} ipython3
:tags: [nbval-ignore-output]

import time

t_ns = time.perf_counter_ns()%s
with open("../results/99_timing.csv", "w") as fh:
    fh.write(f"what,seconds\\nrun,{t_ns}\\n")
print(f"measured {t_ns} ns")
t_ns
```

```{code-cell} ipython3
print("after the timing cell")
```
"""


def _chapter(tmp_path: Path, timing_comment: str = "") -> Path:
    (tmp_path / "notebooks").mkdir(exist_ok=True)
    (tmp_path / "results").mkdir(exist_ok=True)
    md = tmp_path / "notebooks" / "99_synthetic.md"
    md.write_text(HEADER + DETERMINISTIC_CELL + TIMING_CELL % timing_comment)
    return md


def _files(tmp_path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(tmp_path)): p.read_bytes()
            for p in sorted(tmp_path.rglob("*")) if p.is_file()}


def test_reexecution_without_change_is_byte_identical_and_refresh_renews_timings(tmp_path, execute_script):
    md = _chapter(tmp_path)
    first = execute_script.execute(md)
    timing_index = 3  # header markdown, code, markdown, timing code, code
    assert first.refreshed == [timing_index] and first.kept == []
    after_first = _files(tmp_path)
    stored = json.loads(after_first["notebooks/99_synthetic.ipynb"])
    assert all("execution" not in c["metadata"] for c in stored["cells"])
    assert stored["cells"][1]["outputs"] == [
        {"name": "stdout", "output_type": "stream", "text": ["deterministic\n", "still deterministic\n"]}]

    second = execute_script.execute(md)
    assert second.kept == [timing_index] and second.refreshed == []
    assert second.written == []
    assert _files(tmp_path) == after_first, "re-execution without a source change rewrote files"

    third = execute_script.execute(md, refresh_timings=True)
    after_third = _files(tmp_path)
    assert third.refreshed == [timing_index]
    assert after_third["notebooks/99_synthetic.ipynb"] != after_first["notebooks/99_synthetic.ipynb"]
    assert after_third["results/99_timing.csv"] != after_first["results/99_timing.csv"]
    assert after_third["results/99_table.csv"] == after_first["results/99_table.csv"]
    assert "results/99_timing.csv" in third.written

    # an edited timing cell is refreshed without being asked
    _chapter(tmp_path, timing_comment="  # edited")
    fourth = execute_script.execute(md)
    assert fourth.refreshed == [timing_index] and fourth.kept == []
    assert _files(tmp_path)["results/99_timing.csv"] != after_third["results/99_timing.csv"]


def test_a_fresh_clone_without_the_untracked_timing_csv_keeps_the_stored_outputs(tmp_path, execute_script):
    """``results/*_comp.csv`` is git-ignored, so a fresh clone has none: re-executing must still
    leave the tracked notebook byte-identical (and write this machine's CSV)."""
    md = _chapter(tmp_path)
    execute_script.execute(md)
    stored = md.with_suffix(".ipynb").read_bytes()
    (tmp_path / "results" / "99_timing.csv").unlink()
    res = execute_script.execute(md)
    assert res.kept == [3] and res.refreshed == []
    assert md.with_suffix(".ipynb").read_bytes() == stored
    assert (tmp_path / "results" / "99_timing.csv").exists()


def test_kept_timing_outputs_follow_the_new_execution_count(tmp_path, execute_script):
    md = _chapter(tmp_path)
    execute_script.execute(md)
    # one more code cell before the timing cell shifts every execution count by one
    md.write_text(HEADER + "\n```{code-cell} ipython3\nx = 1\n```\n" + DETERMINISTIC_CELL + TIMING_CELL % "")
    res = execute_script.execute(md)
    assert res.kept == [4]
    nb = json.loads(md.with_suffix(".ipynb").read_text())
    timing = nb["cells"][4]
    assert timing["execution_count"] == 3
    results = [o for o in timing["outputs"] if o["output_type"] == "execute_result"]
    assert results and all(o["execution_count"] == 3 for o in results)


def test_results_env_name_is_shared(execute_script):
    assert execute_script.RESULTS_ENV == experiments.RESULTS_DIR_ENV == "BAI_LIB_RESULTS_DIR"


def test_write_csv_honours_the_results_redirect(tmp_path, monkeypatch):
    original = tmp_path / "repo" / "results" / "05_table.csv"
    redirect = tmp_path / "redirect"
    monkeypatch.setenv("BAI_LIB_RESULTS_DIR", str(redirect))
    written = write_csv([{"a": 1, "b": 0.5}], original)
    assert written == redirect / "05_table.csv"
    assert written.read_text() == "a,b\n1,0.5\n"
    assert not (tmp_path / "repo").exists(), "the original path was touched"
    assert results_path("../results/03_opt2_frontier.csv") == redirect / "03_opt2_frontier.csv"

    monkeypatch.delenv("BAI_LIB_RESULTS_DIR")
    assert write_csv([{"a": 1}], original) == original and original.exists()


def test_unit_tests_run_without_the_redirect():
    import os

    assert "BAI_LIB_RESULTS_DIR" not in os.environ


def _tree(tmp_path: Path):
    tracked, written, notebooks = (tmp_path / d for d in ("results", "written", "notebooks"))
    for d in (tracked, written, notebooks):
        d.mkdir()
    (notebooks / "98_x.md").write_text(HEADER + textwrap.dedent("""
        ```{code-cell} ipython3
        :tags: [nbval-ignore-output]

        write_csv(rows, "../results/98_timing.csv")  # seconds
        ```
        """))
    (tracked / "98_same.csv").write_text("a,b\n1,2\n")
    (written / "98_same.csv").write_text("a,b\n1,2\n")
    (tracked / "98_timing.csv").write_text("alg,seconds\nx,0.1\ny,0.2\n")
    (written / "98_timing.csv").write_text("alg,seconds\nx,0.15\ny,0.3\n")
    return tracked, written, notebooks


def test_compare_results_names_the_file_that_differs(tmp_path, execute_script):
    tracked, written, notebooks = _tree(tmp_path)
    assert execute_script.compare_results(written, tracked, notebooks) == []

    (tracked / "98_table.csv").write_text("a,b\n1,2\n3,4\n")
    (written / "98_table.csv").write_text("a,b\n1,2\n3,5\n")
    (written / "98_new.csv").write_text("a\n1\n")
    problems = execute_script.compare_results(written, tracked, notebooks)
    assert len(problems) == 2
    assert "results/98_new.csv" in problems[0] and "not in" in problems[0]
    assert "results/98_table.csv no longer reproduces" in problems[1]
    assert "line 3" in problems[1] and "'3,4'" in problems[1] and "'3,5'" in problems[1]


def test_compare_results_checks_the_shape_of_timing_tables(tmp_path, execute_script):
    tracked, written, notebooks = _tree(tmp_path)
    (written / "98_timing.csv").write_text("alg,seconds\nx,0.15\ny,0.3\nz,1\n")
    problems = execute_script.compare_results(written, tracked, notebooks)
    assert len(problems) == 1 and "results/98_timing.csv" in problems[0]


def test_untracked_timing_tables_are_not_required(tmp_path, execute_script):
    """Wall-clock tables are ignored by git, so a clean clone has none to compare with."""
    tracked, written, notebooks = _tree(tmp_path)
    (tracked / "98_timing.csv").unlink()
    assert execute_script.compare_results(written, tracked, notebooks) == []
    (written / "98_other.csv").write_text("a\n1\n")  # an untracked deterministic table is not
    problems = execute_script.compare_results(written, tracked, notebooks)
    assert len(problems) == 1 and "98_other.csv: written by the notebooks but not in" in problems[0]


def test_check_results_command_fails_naming_the_file(tmp_path, execute_script, capsys, monkeypatch):
    tracked, written, notebooks = _tree(tmp_path)
    (written / "98_same.csv").write_text("a,b\n1,3\n")
    monkeypatch.setattr(execute_script, "RESULTS_DIR", tracked)
    monkeypatch.setattr(execute_script, "NB_DIR", notebooks)
    assert execute_script.main(["--check-results", str(written)]) == 1
    assert "results/98_same.csv no longer reproduces" in capsys.readouterr().err


def test_hygiene_hint_names_the_execute_script_first():
    text = (Path(__file__).parent / "test_notebook_hygiene.py").read_text()
    hint = text[text.index("differ;"):]
    hint = hint[:hint.index(")\n")]
    assert "execute_notebooks.py" in hint
    if "jupytext" in hint:
        assert hint.index("execute_notebooks.py") < hint.index("jupytext")


def test_text_only_sync_copies_prose_and_metadata_and_refuses_code_changes(tmp_path, execute_script):
    md = _chapter(tmp_path)
    execute_script.execute(md)
    ipynb = md.with_suffix(".ipynb")
    outputs_before = [c.get("outputs") for c in json.loads(ipynb.read_text())["cells"]]
    text = md.read_text()
    # new prose and a caption in a code cell's metadata: no execution needed
    edited = (text.replace("# A synthetic chapter", "# A synthetic chapter, reworded")
              .replace("```{code-cell} ipython3\nimport time\n\nwith open",
                       "```{code-cell} ipython3\n---\nmystnb:\n  figure:\n    caption: A caption\n"
                       "---\nimport time\n\nwith open"))
    assert edited.count("A caption") == 1
    md.write_text(edited)
    assert "99_synthetic.ipynb" in execute_script.sync_text(md)
    cells = json.loads(ipynb.read_text())["cells"]
    assert "reworded" in "".join(cells[0]["source"])
    assert cells[1]["metadata"]["mystnb"]["figure"]["caption"] == "A caption"
    assert [c.get("outputs") for c in cells] == outputs_before, "stored outputs must be kept"
    assert execute_script.sync_text(md) == [], "a second sync must change nothing"
    # a code change needs an execution: refused, and the stored notebook is left alone
    stored = ipynb.read_bytes()
    md.write_text(edited.replace('print("deterministic")', 'print("changed")'))
    with pytest.raises(execute_script.CodeChanged, match="code cell 0 .* execute it"):
        execute_script.sync_text(md)
    assert ipynb.read_bytes() == stored


def test_execution_times_are_recorded_with_new_outputs_and_kept_otherwise(tmp_path, execute_script):
    """The book's execution statistics: an entry appears at the first execution, stays as it was
    when a re-execution changes nothing, and is renewed with --refresh-timings."""
    times = tmp_path / "execution_times.json"
    Execution = execute_script.Execution
    first = Execution(seconds=12.34, cpu_seconds=20.0, written=["99_synthetic.ipynb"])
    assert execute_script.record_time("99_synthetic", first, False, times)
    entry = json.loads(times.read_text())["99_synthetic"]
    assert (entry["seconds"], entry["cpu_seconds"]) == (12.3, 20.0)
    unchanged = Execution(seconds=50.0, cpu_seconds=90.0)
    before = times.read_bytes()
    assert not execute_script.record_time("99_synthetic", unchanged, False, times)
    assert times.read_bytes() == before
    assert execute_script.record_time("99_synthetic", unchanged, True, times)
    assert json.loads(times.read_text())["99_synthetic"]["seconds"] == 50.0


def test_audit_times_are_kept_beside_a_new_full_measurement(tmp_path, execute_script):
    times = tmp_path / "times.json"
    run = execute_script.Execution(seconds=50.0, cpu_seconds=90.0, written=["x.ipynb"])
    with pytest.raises(ValueError, match="no full execution"):
        execute_script.record_audit_time("99_synthetic", run, times)
    execute_script.record_time("99_synthetic", run, False, times)
    execute_script.record_audit_time("99_synthetic",
                                     execute_script.Execution(seconds=5.0, cpu_seconds=8.0), times)
    execute_script.record_time("99_synthetic", run, True, times)
    entry = json.loads(times.read_text())["99_synthetic"]
    assert (entry["seconds"], entry["audit_seconds"], entry["audit_cpu_seconds"]) == (50.0, 5.0, 8.0)


def test_a_real_execution_measures_the_kernels_cpu_time(tmp_path, execute_script):
    md = _chapter(tmp_path)
    res = execute_script.execute(md)
    assert 0.0 < res.cpu_seconds < 10 * res.seconds, res


def test_the_book_tabulates_the_recorded_execution_times():
    import importlib.util
    path = Path(__file__).resolve().parents[1] / "book" / "_ext" / "execution_stats.py"
    spec = importlib.util.spec_from_file_location("execution_stats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.size_text(102, 6_012_345) == "102 files, 6.0 MB in all"
    files, size = module.run_cache_size(path.parents[2] / "results" / "runs")
    assert files > 50 and size == sum(f.stat().st_size for f in
                                      (path.parents[2] / "results" / "runs").rglob("*.parquet"))
    rows = module.table_rows({
        "02_b": {"seconds": 100.0, "cpu_seconds": 190.0, "cores": 2, "measured": "2026-11-27"},
        "01_a": {"seconds": 5.25, "cpu_seconds": 5.0, "cores": 2, "measured": "2026-11-26"}})
    assert rows == [["{doc}`/notebooks/01_a`", "2026-11-26", "5.2", "5", "0.95"],
                    ["{doc}`/notebooks/02_b`", "2026-11-27", "100.0", "190", "1.90"],
                    ["all 2 chapters", "on 2 cores", "105.2", "195", "1.85"]]
    times = {"02_b": {"seconds": 100.0, "cpu_seconds": 190.0, "cores": 2, "measured": "2026-11-27",
                      "audit_seconds": 12.5, "audit_cpu_seconds": 19.0},
             "01_a": {"seconds": 5.25, "cpu_seconds": 5.0, "cores": 2, "measured": "2026-11-26",
                      "audit_seconds": 5.0, "audit_cpu_seconds": 5.0}}
    assert module.audit_rows(times) == [["{doc}`/notebooks/01_a`", "5", "5.0", "5", "100%"],
                                        ["{doc}`/notebooks/02_b`", "190", "12.5", "19", "10%"],
                                        ["all 2 chapters", "195", "17.5", "24", "12%"]]
    del times["01_a"]["audit_cpu_seconds"]
    assert module.audit_rows(times)[-1] == ["all 2 chapters", "195", "—", "—", "—"]
    recorded = json.loads((path.parents[2] / "notebooks" / "execution_times.json").read_text())
    chapters = sorted(p.stem for p in (path.parents[2] / "notebooks").glob("[0-9][0-9]_*.md"))
    assert sorted(recorded) == chapters, "a chapter has no recorded execution time"


def test_the_performance_page_sentence_on_execution_times_holds():
    """book/performance.md: "The chapters that keep a run cache (see below) take nearly all of
    the time, and those of them that take more than a minute keep one and a half to two CPUs
    busy", but chapter 16 on one thread -- checked on the recorded times and the cache's
    folders, so the sentence fails with them."""
    root = Path(__file__).resolve().parents[1]
    page = " ".join((root / "book" / "performance.md").read_text().split())
    assert ("The chapters that keep a run cache (see below) take nearly all of the time, and those "
            "of them that take more than a minute keep one and a half to two CPUs busy") in page
    times = json.loads((root / "notebooks" / "execution_times.json").read_text())
    cached = [p.name for p in (root / "results" / "runs").iterdir() if p.is_dir()]
    assert cached and all(name in times for name in cached)
    total = sum(t["seconds"] for t in times.values())
    assert sum(times[name]["seconds"] for name in cached) >= 0.9 * total
    long = [name for name in cached if times[name]["seconds"] > 60]
    one_thread = "16_how_far_from_optimal"  # "the exception is chapter 16 ... on one thread"
    assert "the exception is chapter 16, whose backward inductions (most of its time) run on " \
        "one thread" in page
    assert one_thread in long
    assert times[one_thread]["cpu_seconds"] / times[one_thread]["seconds"] < 1.5
    assert all(1.5 <= times[name]["cpu_seconds"] / times[name]["seconds"] <= 2.0
               for name in long if name != one_thread)
