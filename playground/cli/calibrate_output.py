"""What the calibrate subcommands print and write: tables, the calibration report, the PPI table, --out files.

Shared by the calibrate handlers (:mod:`playground.cli.calibrate_compare`, :mod:`playground.cli.calibrate_people`)
and :mod:`playground.cli.calibrate_external` (apart from them, so that none imports another).
"""
from __future__ import annotations

from pathlib import Path

__all__ = [
    "boot_count",
    "fmt_interval",
    "fmt_value",
    "open_label_store",
    "print_ppi",
    "print_report",
    "print_table",
    "write_outputs",
]


def print_table(frame, columns=None, title: str = "") -> str:
    """Print ``frame`` (only ``columns`` that exist, in that order) under ``title``, indented two spaces,
    floats to 3 decimals and missing values as "—"; return the printed text ("" when empty: "(none)")."""
    import pandas as pd

    f = frame if columns is None else frame[[c for c in columns if c in frame.columns]]
    if title:
        print(title)
    if len(f) == 0:
        print("  (none)")
        return ""
    f = f.astype(object).map(_cell)
    with pd.option_context("display.width", 250, "display.max_columns", 40, "display.max_colwidth", 60):
        text = f.to_string(index=False)
    print("\n".join("  " + line for line in text.splitlines()))
    return text


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "—"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def fmt_value(x, pct: bool = False) -> str:
    """``x`` to 3 decimals (a percentage with one decimal when ``pct``); "—" for None."""
    if x is None:
        return "—"
    return f"{x:.1%}" if pct else f"{x:.3f}"


def fmt_interval(low, high) -> str:
    """`` [low, high]`` to 3 decimals, or "" when either end is None."""
    return "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"


def print_report(report, *, ppi_title: str = "", dataset: str | None = None) -> None:
    """Print a :class:`~playground.calibrate.CalibrationReport`: per dimension the comparison, the threshold
    sweep, then the PPI table and the first 10 disagreements."""
    print(f"human: {report.human.name} ({report.human.note or report.human.kind}); automatic: {report.auto.name}")
    print()
    print("human versus automatic, on the units both labelled:")
    for d in report.dimensions:
        c = report.comparisons[d]
        k = c.kappa
        print(f"  {d} (n={c.n}, automatic threshold {c.threshold if c.threshold is not None else '—'}):")
        print(f"    human rate {c.human_rate}   automatic rate {c.auto_rate}")
        d = c.difference
        if d is not None and d.defined:
            verdict = "the rates differ" if d.excludes_zero else "no difference shown"
            print(f"    automatic - human {d.difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}] (paired, Newcombe; "
                  f"{d.a_only} automatic-only yes, {d.b_only} human-only yes: {verdict})")
        print(f"    agreement {fmt_value(c.agreement, True)} (base rate {fmt_value(c.base_rate, True)})   "
              f"kappa {fmt_value(k.kappa)}{fmt_interval(k.low, k.high)}   MCC {fmt_value(c.mcc)}   "
              f"PABAK {fmt_value(c.pabak)}   "
              f"F1(no) {fmt_value(c.f1_no)}   balanced accuracy {fmt_value(c.balanced_accuracy)}")
        print(f"    TPR {c.tpr}   TNR {c.tnr}   (of the human 'yes' / 'no' units, the share the scorer gets right)")
        (a, b), (e, f) = c.confusion
        print(f"    confusion (rows human, columns automatic): no/no {a}  no/yes {b}  yes/no {e}  yes/yes {f}")
        if k.reason or k.note:
            print(f"    note: {k.reason or k.note}")
        if c.human_only or c.auto_only:
            print(f"    not compared: {c.human_only} human-only, {c.auto_only} automatic-only units")
    print()
    print("threshold calibration (best = highest kappa; F1 of the 'no' class):")
    for d in report.dimensions:
        s = report.sweeps[d].summary()
        t = report.sweeps[d]
        if t.binary:
            print(f"  {d}: the score is binary, nothing to sweep")
            continue
        print(f"  {d}: default {s['default_threshold']} -> kappa {fmt_value(s['default_kappa'])}"
              f"{fmt_interval(s['default_kappa_low'], s['default_kappa_high'])}, F1 {fmt_value(s['default_f1'])};  "
              f"best {s['best_threshold']} -> kappa {fmt_value(s['best_kappa'])}"
              f"{fmt_interval(s['best_kappa_low'], s['best_kappa_high'])}, F1 {fmt_value(s['best_f1'])}")
        if t.cv is not None:
            print(f"    out of sample ({t.cv.folds}-fold CV by {t.group_by}, {t.cv.n_groups} groups): kappa "
                  f"{fmt_value(t.cv.kappa)}{fmt_interval(t.cv.kappa_low, t.cv.kappa_high)}, balanced accuracy "
                  f"{fmt_value(t.cv.balanced_accuracy)}, F1 {fmt_value(t.cv.f1)}; "
                  f"fold thresholds {s['cv_fold_thresholds']}")
        elif t.cv_reason:
            print(f"    no cross-validation: {t.cv_reason}")
        if t.warning:
            print(f"    WARNING: {t.warning}")
    print()
    print_ppi(report.ppi, ppi_title or "prediction-powered estimates (PPI++; human-only Wilson interval, "
               "automatic-only rate):", dataset=dataset)
    dis = report.disagreements()
    print()
    more = " (first 10; all in disagreements.csv with --out)" if len(dis) > 10 else ""
    print(f"disagreements: {len(dis)} unit(s)" + more)
    if len(dis):
        print_table(dis.head(10), ["dimension", "unit_id", "human", "auto", "score", "link"])


def print_ppi(frame, title: str, extra: tuple[str, ...] = (), dataset: str | None = None) -> None:
    """The PPI table; without a calibration sample, one plain sentence instead of the PPI columns."""
    valid = bool(len(frame)) and bool(frame["valid"].any())
    cols = ["dimension", "n_labelled", "n_unlabelled", "human_rate", "human_low", "human_high", "auto_rate"]
    if valid or not len(frame) or frame["sample_seed"].notna().any():
        cols += ["ppi_rate", "ppi_low", "ppi_high", "lam", *extra, "labels_needed", "more_labels", "outside_sample",
                 "note"]
    if len(frame) and (frame["n_unlabelled"] == 0).all():
        print(title)
        print("  every unit has a human label: the human rates above are the rates; nothing for PPI to add")
        return
    print_table(frame, cols, title)
    if len(frame) and frame["sample_seed"].isna().all():
        from ..calibrate.ppi import NOT_A_SAMPLE
        from ..datasets import with_dataset

        command = "playground calibrate sample"
        advice = NOT_A_SAMPLE.replace(command, with_dataset(command, dataset))
        print(f"  no PPI interval: {advice}")


def write_outputs(report, out: Path | None, extra: dict | None = None) -> None:
    """With ``--out``: the report's tables (and ``extra`` ones) as CSV and its charts as PNG in ``out``."""
    if out is None:
        return
    from ..calibrate import write_tables
    from ..ui.calibration import write_charts

    tables = report.tables()
    tables.update(extra or {})
    written = write_tables(tables, out)
    charts = write_charts(report, out)
    print(f"\nwrote {len(written)} table(s) and {len(charts)} chart(s) to {out}/")


def boot_count(args, default: int) -> int:
    """``--boot`` when given, else ``default`` bootstrap resamples."""
    return default if getattr(args, "boot", None) is None else args.boot


def open_label_store(db, **kw):
    """:func:`playground.store.open_store`, imported when first needed."""
    from ..store import open_store

    return open_store(db, **kw)
