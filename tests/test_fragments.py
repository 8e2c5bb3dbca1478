"""HTML fragments of the playground page: numbers as the metrics give them, text always escaped."""
from playground.metrics import composite, diagnose, rate_from_counts
from playground.ui.fragments import composite_html, diagnosis_html, esc, pct, rate_cell


def _rates(**counts):
    dims = ("context_relevance", "faithfulness", "correctness", "coverage")
    return {d: rate_from_counts(d, *counts.get(d, (0, 0))) for d in dims}


def test_rate_cell_shows_rate_interval_and_n():
    # Wilson 3/10 at 95%: [0.1078, 0.6032] → 11%–60%
    assert rate_cell(rate_from_counts("faithfulness", 3, 10)) == (
        '<span class="pg-num pg-value">30%</span> <span class="pg-ci pg-interval">[11%–60%]</span> '
        '<span class="pg-ci">n=10</span>')
    assert "no data" in rate_cell(rate_from_counts("faithfulness", 0, 0))
    assert pct(None) == "–" and pct(0.123, 1) == "12.3%"


def test_diagnosis_names_every_failing_dimension():
    page = diagnosis_html(diagnose(_rates(faithfulness=(1, 10), coverage=(2, 10), correctness=(9, 10))), "this case")
    assert "2 failing" in page and "faithfulness 10%" in page and "coverage 20%" in page
    assert "no data: context relevance" in page


def test_gate_reasons_and_text_are_escaped():
    c = composite(_rates(faithfulness=(5, 10)), {"faithfulness": 1.0}, gates={"faithfulness": 0.95})
    page = composite_html(c, "this case")
    assert "GATED" in page and "0.50" in page
    assert esc('<img src=x onerror="alert(1)">') == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
