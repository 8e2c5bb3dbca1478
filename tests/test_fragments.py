"""HTML fragments of the playground page: numbers as the metrics give them, text always escaped."""
import pytest

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


# --- markdown, sanitised ------------------------------------------------------------------------------------

from playground.ui.fragments import evidence_html, markdown_html, response_html  # noqa: E402

HOSTILE_MARKDOWN = [
    "<script>window.__xss=1</script>",
    '<img src=x onerror="window.__xss=1">',
    "[click](javascript:window.__xss=1)",
    "[click](JaVaScRiPt:window.__xss=1)",
    "[click](data:text/html,<script>x</script>)",
    '![i](x" onerror="window.__xss=1)',
    "<a href='javascript:alert(1)'>a</a>",
    '<b onmouseover="window.__xss=1">b</b>',
    "<iframe src='https://example.org'></iframe>",
    "[ref]: javascript:alert(1)\n\n[x][ref]",
    "<svg onload=alert(1)>",
    "`<script>` in code stays text",
]


def test_markdown_renders_code_lists_and_emphasis():
    html = markdown_html("Use `retry()` with *care* and **force**:\n\n- one\n- two\n\n1. first")
    assert html == ("<p>Use <code>retry()</code> with <em>care</em> and <strong>force</strong>:</p>\n"
                    "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<ol>\n<li>first</li>\n</ol>\n")
    assert markdown_html("line one\nline two") == "<p>line one<br>\nline two</p>\n"  # a newline stays a break
    assert markdown_html("[docs](https://example.org/a)") == (
        '<p><a href="https://example.org/a" rel="noopener noreferrer nofollow">docs</a></p>\n')


def _elements(html: str) -> list[tuple[str, dict]]:
    """Every element and its attributes, as a browser's parser sees them."""
    from html.parser import HTMLParser

    found: list[tuple[str, dict]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Collect().feed(html)
    return found


@pytest.mark.parametrize("payload", HOSTILE_MARKDOWN)
def test_no_markdown_payload_can_carry_script(payload):
    html = markdown_html(payload)
    for tag, attrs in _elements(html):
        assert tag in {"p", "a", "code", "br", "strong", "em"}, (payload, html)
        assert not any(name.startswith("on") for name in attrs), (payload, html)
        href = (attrs.get("href") or "").strip().lower()
        assert not href.startswith(("javascript:", "data:", "vbscript:")), (payload, html)
    assert "window.__xss" not in "".join(str(a) for _, a in _elements(html))


def test_markdown_of_nothing_and_of_non_text():
    assert markdown_html(None) == "" and markdown_html("") == ""
    assert markdown_html(42) == "<p>42</p>\n"


def test_claims_are_marked_in_the_response_even_across_emphasis_and_line_breaks():
    html = response_html("Hi. Endpoints answer within **15** seconds.\nThe key is `x`.",
                         ["Endpoints answer within 15 seconds.", "The key is x.", "Never said."])
    assert html == ('<p>Hi. <mark class="pg-mark pg-mark-0">Endpoints answer within <strong>15</strong> seconds.'
                    '</mark><br>\n<mark class="pg-mark pg-mark-1">The key is <code>x</code>.</mark></p>\n')


def test_text_cannot_forge_a_claim_mark():
    html = response_html("a \ue0000\ue001<b>b</b>\ue002 c", [])
    assert "<mark" not in html and "&lt;b&gt;b&lt;/b&gt;" in html


def test_evidence_shows_matched_and_missing_words_escaped():
    from playground.harness.score import support_detail

    ev = support_detail("Endpoints answer within 45 seconds <b>now</b>.",
                        ["An endpoint must answer within 15 seconds."])
    html = evidence_html(ev)
    assert "missing from the passages" in html and "<span class='pg-ev-missing-exact'>45</span>" in html
    assert "matched in the passages:" in html and "<b>now" not in html and "/b&gt;." in html
    assert f"support {ev.score:.2f}" in html


# --- what the page teaches (issue 23.5) and says precisely (issue 23.7) ---------------------------------------
def test_the_variant_purposes_are_the_golden_readmes_table():
    """explain.VARIANT_PURPOSE is golden/README.md's "Variants" table, row for row, and covers model.VARIANTS."""
    import re
    from pathlib import Path

    from playground.model import VARIANTS
    from playground.ui.explain import VARIANT_PURPOSE

    readme = (Path(__file__).resolve().parent.parent / "golden" / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Variants", 1)[1].split("\n\n", 2)[1]
    rows = {m.group(1): (m.group(2).strip(), m.group(3).strip())
            for m in re.finditer(r"^\| `(\w+)` \|([^|]+)\|([^|]+)\|$", table, re.M)}
    plain = {v: (shows.replace('"', "").replace("“", "").replace("”", ""), moves.replace("`", ""))
             for v, (shows, moves) in rows.items()}
    ours = {v: (shows.replace("“", "").replace("”", ""), moves) for v, (shows, moves) in VARIANT_PURPOSE.items()}
    assert ours == plain
    assert set(VARIANT_PURPOSE) == set(VARIANTS)


def test_the_wilson_example_on_five_claims_is_what_statsmodels_gives():
    from statsmodels.stats.proportion import proportion_confint

    from playground.ui.explain import WHY

    low, high = proportion_confint(3, 5, alpha=0.05, method="wilson")
    assert (round(100 * low), round(100 * high)) == (23, 88)
    assert "60% [23–88%]" in WHY["wilson"][0] and "3 of 5" in WHY["wilson"][1]
    # the composite's example: 0% faithfulness and 100% elsewhere at equal weights
    assert 0.25 * (0 + 1 + 1 + 1) == 0.75 and "75%" in WHY["composite"][1]


def test_why_and_variant_html():
    from playground.ui.explain import WHY, variant_html, why_html

    assert set(WHY) == {"relevant", "supported", "correct", "covered", "wilson", "composite"}
    page = why_html("covered")
    assert page.startswith("<details class='pg-why pg-why-covered'><summary>") and "short, faithful and" in page
    assert "built to move: coverage" in variant_html("incomplete")
    assert variant_html("imported") == ""  # a variant the shipped set does not author: nothing to teach


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("How long do retries last?", 25, "How long do retries last?"),        # exactly the limit: whole
    ("How long do retries last??", 25, "How long do retries…"),            # one over: cut at the last space
    ("  How   long\n do  ", 46, "How long do"),                            # one line, single spaces
    ("Supercalifragilistic expialidocious", 12, "Supercalifr…"),           # no space in the first half: in the word
    ("Is it, or not", 8, "Is it…"),                                        # trailing punctuation dropped
])
def test_shorten_cuts_at_a_word_boundary(text, limit, expected):
    from playground.ui.views import shorten

    out = shorten(text, limit)
    assert out == expected and len(out) <= limit


def test_short_id_drops_the_dataset_prefix():
    from playground.ui.views import short_id

    assert short_id("halu_jsonl:h0002640e49") == "h0002640e49" and short_id("GC-0003") == "GC-0003"
