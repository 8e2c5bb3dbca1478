"""The harness results page: the scorecard and every case, filterable by wrong, hallucination and review queue.

``notebooks/harness.ipynb`` calls :func:`launch`, which shows the run folder
named by ``PLAYGROUND_HARNESS_RUN`` or, when there is none, runs the default
configuration into ``runs/default`` first (about 3 seconds for the shipped set).
Every miss is visible: the case table is filtered, never truncated.
"""
from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

import pandas as pd

__all__ = [
    "FILTERS",
    "TABLE_COLUMNS",
    "ensure_run",
    "filter_cases",
    "launch",
    "load_run",
    "scorecard_html",
    "variant_chart",
]

FILTERS = {
    "wrong answer": lambda df: df["answer_correct"] == 0,
    "hallucination": lambda df: df["hallucination"] == 1,
    "review queue": lambda df: df["review_queue"] == 1,
    "assertion failed": lambda df: df["assertion_failures"].fillna("") != "",
    "rejected": lambda df: df["verdict"] == "REJECT",
}
TABLE_COLUMNS = [
    "case_id",
    "case_type",
    "response_id",
    "variant",
    "verdict",
    "failure_type",
    "answer_correct",
    "hallucination",
    "review_queue",
    "faithfulness",
    "correctness",
    "coverage",
    "assertion_failures",
    "reason",
]


def ensure_run(run_dir: str | Path | None = None, root: str | Path | None = None) -> Path:
    """The run folder to show: ``run_dir`` if it holds a report, else a fresh default run in ``runs/default``."""
    from .. import REPO_ROOT
    from ..harness.config import load_config
    from ..harness.run import run_harness

    run = Path(run_dir) if run_dir else REPO_ROOT / "runs" / "default"
    if not (run / "report.json").is_file():
        run_harness(load_config(), run, root=root, progress=False)
    return run


def load_run(run: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """The run's report (checked as the gate checks it) and its ``cases.csv``; a DataError
    naming the file when either is missing or the report is not a harness report."""
    from ..errors import DataError, Problem
    from ..harness.gate import NOT_A_RUN, load_report

    report = load_report(run)
    if not (run / "cases.csv").is_file():
        raise DataError([Problem(str(run / "cases.csv"), "missing: rerun the harness")], NOT_A_RUN)
    cases = pd.read_csv(
        run / "cases.csv", dtype={"assertion_failures": str, "failure_type": str}, keep_default_na=False
    )
    return report, cases


def filter_cases(cases: pd.DataFrame, active: list[str], case_types: list[str] | None = None) -> pd.DataFrame:
    """Rows matching every active filter (and one of ``case_types`` when given), in case order."""
    mask = pd.Series(True, index=cases.index)
    for name in active:
        mask &= FILTERS[name](cases)
    if case_types:
        mask &= cases["case_type"].isin(case_types)
    return cases[mask].sort_values(["case_id", "response_id"], kind="stable")


def scorecard_html(report: dict[str, Any]) -> str:
    """Hard assertions first, then the metrics overall and per case type, as escaped HTML."""
    a = report["assertions"]
    verdict = "PASS" if a["gated_failures"] == 0 else "FAIL"
    colour = "#1a7f37" if verdict == "PASS" else "#cf222e"
    rows = "".join(
        f"<tr><td>{html.escape(name)}</td><td>{info['passed']}</td><td>{info['failed']}</td><td>{info['not_applicable']}</td>"
        f"<td>{html.escape(', '.join(info['failing']) or '—')}</td></tr>"
        for name, info in a["gated"].items()
    )
    caught = ", ".join(f"{html.escape(k)} {v}" for k, v in a["caught_in_failure_variants"].items() if v) or "none"
    parts = [
        f"<h3>Run <code>{html.escape(report['config']['name'])}</code> "
        f"({report['counts']['cases']} cases, {report['counts']['responses']} responses)</h3>",
        f"<p><b style='color:{colour}'>Hard assertions: {verdict}</b> — {a['gated_failures']} gated failure(s). "
        f"<small>{html.escape(a['rule'])}. Caught in the failure variants: {caught}.</small></p>",
        "<table class='pg-table'><tr><th>assertion</th><th>pass</th><th>fail</th><th>n/a</th><th>failing</th></tr>"
        f"{rows}</table>",
    ]
    metrics = pd.DataFrame({"overall": report["metrics"]["overall"], **report["metrics"]["by_case_type"]})
    parts.append("<h4>Metrics (overall and per case type)</h4>")
    parts.append(metrics.to_html(float_format=lambda v: f"{v:.3f}", na_rep="—", escape=True, classes="pg-table"))
    verdicts = ", ".join(f"{html.escape(k)}: {v}" for k, v in report["decisions"]["verdicts"].items())
    parts.append(f"<p>Decisions — {verdicts}</p>")
    return "\n".join(parts)


def variant_chart(report: dict[str, Any]):
    """Faithfulness, correctness and coverage per authored variant: each variant moves its own dimension."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = report["by_variant"]
    names = list(variants)
    dims = ["faithfulness", "correctness", "coverage"]
    fig, ax = plt.subplots(figsize=(9, 3.6), dpi=100)
    width = 0.27
    for i, dim in enumerate(dims):
        values = [variants[v][dim] if variants[v][dim] is not None else 0 for v in names]
        ax.bar([x + (i - 1) * width for x in range(len(names))], values, width, label=dim)
    ax.set_xticks(range(len(names)), [n.replace("_", "\n") for n in names], fontsize=7)
    ax.set_ylim(0, 1)
    ax.set_ylabel("automatic rate")
    ax.set_title("Harness rates per authored variant")
    ax.legend(fontsize=8, ncols=3, loc="upper right")
    fig.tight_layout()
    return fig


def launch(run_dir: str | Path | None = None):
    """Build and display the page (in a notebook or Voila)."""
    import io

    import ipywidgets as W
    from IPython.display import display

    from ..errors import DataError

    run = ensure_run(
        run_dir or os.environ.get("PLAYGROUND_HARNESS_RUN") or None, os.environ.get("PLAYGROUND_ROOT") or None
    )
    try:
        report, cases = load_run(run)
    except DataError as exc:  # a broken run folder: say what is wrong on the page, not a traceback
        message = W.HTML(f"<pre>{html.escape(exc.report())}</pre>")
        display(message)
        return message
    score = W.HTML(scorecard_html(report))
    fig = variant_chart(report)
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    chart = W.Image(value=buf.getvalue(), format="png")
    boxes = {
        name: W.Checkbox(description=name, value=False, indent=False, layout=W.Layout(width="160px"))
        for name in FILTERS
    }
    types = W.SelectMultiple(options=sorted(cases["case_type"].unique()), rows=6, description="case types")
    count = W.Label()
    table = W.HTML()

    def refresh(*_):
        shown = filter_cases(cases, [n for n, b in boxes.items() if b.value], list(types.value))
        count.value = f"{len(shown)} of {len(cases)} responses"
        table.value = shown[TABLE_COLUMNS].to_html(index=False, escape=True, na_rep="", classes="pg-table")

    for widget in [*boxes.values(), types]:
        widget.observe(refresh, names="value")
    refresh()
    style = W.HTML("<style>.pg-table{border-collapse:collapse;font-size:12px}.pg-table td,.pg-table th"
                   "{border:1px solid #ddd;padding:2px 6px;text-align:left}</style>")
    page = W.VBox(
        [
            style,
            score,
            chart,
            W.HTML("<h4>Every case</h4>"),
            W.HBox([W.VBox(list(boxes.values())), types]),
            count,
            table,
        ]
    )
    display(page)
    return page
