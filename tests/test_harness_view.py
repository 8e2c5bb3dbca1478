"""The harness results page: filters show every miss; the notebook runs headless."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from playground.harness.config import load_config
from playground.harness.run import run_harness
from playground.ui.harness_view import FILTERS, filter_cases, load_run, scorecard_html


@pytest.fixture
def mini_run(mini_root, tmp_path):
    run_harness(load_config(), tmp_path / "run", root=mini_root, progress=False)
    return tmp_path / "run"


def test_filters_select_exactly_the_misses(mini_run):
    _report, cases = load_run(mini_run)
    assert len(filter_cases(cases, [])) == 3
    wrong = filter_cases(cases, ["wrong answer"])
    assert set(wrong["response_id"]) == set(cases.loc[cases["answer_correct"] == 0, "response_id"])
    halluc = filter_cases(cases, ["hallucination"])
    assert list(halluc["variant"]) == ["confident_hallucination"]
    assert len(filter_cases(cases, ["hallucination"], ["cross_tenant"])) == 0
    assert set(FILTERS) >= {"wrong answer", "hallucination", "review queue"}


def test_scorecard_puts_assertions_first_and_escapes(mini_run):
    report, _ = load_run(mini_run)
    report["config"]["name"] = "<script>x</script>"
    page = scorecard_html(report)
    assert page.index("Hard assertions") < page.index("Metrics")
    assert "<script>x" not in page and "&lt;script&gt;" in page


@pytest.mark.slow
def test_notebook_runs_headless(mini_run):
    nb = nbformat.read(Path(__file__).resolve().parent.parent / "notebooks" / "harness.ipynb", as_version=4)
    os.environ["PLAYGROUND_HARNESS_RUN"] = str(mini_run)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    finally:
        os.environ.pop("PLAYGROUND_HARNESS_RUN")
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]


def test_a_broken_run_folder_is_one_error_naming_the_file(mini_run):
    from playground.errors import DataError
    from playground.ui.harness_view import launch

    report = mini_run / "report.json"
    report.write_text(report.read_text(encoding="utf-8")[:40], encoding="utf-8")  # cut mid-write
    with pytest.raises(DataError) as err:
        load_run(mini_run)
    assert err.value.problems[0].file == str(report)
    assert "truncated or not JSON" in err.value.problems[0].message
    page = launch(mini_run)  # the page says so instead of raising
    assert "not a finished harness run" in page.value and "truncated or not JSON" in page.value


def test_a_run_without_its_case_table_is_one_error(mini_run):
    from playground.errors import DataError

    (mini_run / "cases.csv").unlink()
    with pytest.raises(DataError) as err:
        load_run(mini_run)
    assert [(p.file, p.message) for p in err.value.problems] == \
        [(str(mini_run / "cases.csv"), "missing: rerun the harness")]
