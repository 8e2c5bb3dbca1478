"""The HTML of error analysis: failure-mode tables, the authored verdict, guidelines (sanitised, versioned)."""
from __future__ import annotations

from collections import namedtuple

from playground.store import UNSURE
from playground.ui.verdict_html import (
    authored_html,
    failure_table_html,
    failures_by_annotator_html,
    guidelines_html,
)

Row = namedtuple("Row", "name responses_tagged responses_judged rate low high")


def test_the_failure_table_gives_counts_rates_and_wilson_intervals():
    # 1 of 4 judged responses tagged: 25%, Wilson [4.6%, 69.9%] -> "25% [5–70%]"
    rows = [Row("stale-source", 1, 4, 0.25, 0.0456, 0.6994), Row("<b>x</b>", 0, 4, 0.0, 0.0, 0.4899)]
    html = failure_table_html(rows, (3, 4, 0.3006, 0.9544))
    assert "<td class='pg-num'>1/4</td><td class='pg-num'>25% [5–70%]</td>" in html
    assert "<tr class='pg-pass-rate'><td><i>pass</i></td><td class='pg-num'>3/4</td>" in html
    assert "75% [30–95%]" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html  # a tag name is text
    assert "pooled over every annotator" in html
    assert "No response judged yet" in failure_table_html([], None)


def test_per_annotator_rows_are_folded_and_sorted_by_name():
    html = failures_by_annotator_html({"zoe": [Row("a", 1, 1, 1.0, 0.2065, 1.0)],
                                       "amy": [Row("a", 0, 2, 0.0, 0.0, 0.6576)]})
    assert html.startswith("<details class='pg-failure-by-annotator'><summary>per annotator (2)</summary>")
    assert html.index("amy") < html.index("zoe")
    assert failures_by_annotator_html({}) == ""


def test_the_authored_verdict_sits_beside_yours():
    html = authored_html(0, ("stale-source",), 0)
    assert "pg-verdict-fail'>fail</span> <span class='pg-agree'>= yours</span>" in html
    assert "<span class='pg-chip pg-chip-authored'>stale-source</span>" in html
    assert "≠ yours" in authored_html(1, (), 0) and "no failure tag" in authored_html(1, (), 0)
    assert "pg-verdict-unsure" in authored_html(UNSURE, (), None) and "yours" not in authored_html(UNSURE, (), None)


def test_guidelines_are_sanitised_markdown_with_their_version():
    md = "**bold** [x](javascript:alert(1)) <script>alert(1)</script> <img src=x onerror=alert(1)>"
    html = guidelines_html(md, 3, "mine", "owner")
    assert "version 3 by owner" in html and "<strong>bold</strong>" in html
    assert "<script" not in html and "<img" not in html and "href" not in html  # the javascript: link is refused
    assert "&lt;script&gt;" in html and "[x](javascript:alert(1))" in html  # both shown as text
    assert "has no guidelines of its own" in guidelines_html(None, None, "mine")
