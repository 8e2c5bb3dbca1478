#!/usr/bin/env python
"""Benchmark: what one toggle costs in the playground's kernel, on the shipped corpus and golden set.

A toggle is :meth:`LabelSession.set_label` (the label written to a SQLite
store: one transaction, ``synchronous=FULL``) followed by the recompute the
page shows: :meth:`LabelSession.scores` — the four rates with Wilson
intervals for the case on screen and pooled over everything labelled, the
composite of both, the diagnosis of both, agreement with the harness per
dimension and progress.  Target: recompute under 50 ms.

Also measured, for the whole picture: the same toggle through the widgets
(:class:`PlaygroundApp`, no browser attached: every widget update the page
gets, without the chart), the chart's PNG, and starting a session (the
harness run over every case).

Two states: an empty store (the first labels of a person) and a fully
labelled one (every unit and dimension labelled, so agreement and pooling
run over everything).  ~200 seeded random toggles each.

Run ``python bench/bench_session.py [--toggles N] [--root DIR]`` (``make bench``).
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from machine import describe  # noqa: E402  (bench/machine.py)

TARGET_MS = 50.0


def summary(name: str, seconds: list[float]) -> tuple[str, float, float, float, float]:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return name, statistics.fmean(ms), statistics.median(ms), p95, ms[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--toggles", type=int, default=200)
    parser.add_argument("--root", default=None, help="data root (default: the repository's corpus/ and golden/)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    from playground.golden import load_dataset
    from playground.store import open_store
    from playground.ui.session import LabelSession
    t_import = time.perf_counter() - t0

    t0 = time.perf_counter()
    dataset = load_dataset(args.root)
    t_load = time.perf_counter() - t0
    tmp = tempfile.TemporaryDirectory()
    store = open_store(Path(tmp.name) / "bench.db")
    t0 = time.perf_counter()
    session = LabelSession(dataset, store, annotator="bench")
    t_session = time.perf_counter() - t0

    pairs = [(u, d) for u, unit in session.catalog.items() for d in unit.dimensions]
    rng = random.Random(args.seed)
    n_claims = sum(1 for u in session.catalog.values() if u.unit_kind == "claim")
    print(f"data: {len(dataset.cases)} cases, {len(dataset.responses)} responses, {len(session.catalog)} units "
          f"({n_claims} claims), {len(pairs)} (unit, dimension) pairs")
    print(f"machine: {describe()}")
    print(f"start: imports {t_import:.2f} s, load data {t_load:.2f} s, session (harness on every case + catalog) "
          f"{t_session:.2f} s\n")

    def run(label: str, state: str) -> list[tuple]:
        write, recompute, both = [], [], []
        for _ in range(args.toggles):
            uid, dim = rng.choice(pairs)
            cid, rid = session._group[uid]
            session.go_to(cid, rid or None)
            current = session.label(uid, dim)
            value = rng.choice([v for v in (1, 0, None) if v != current])
            t0 = time.perf_counter()
            session.set_label(uid, dim, value)
            t1 = time.perf_counter()
            session.scores()
            t2 = time.perf_counter()
            write.append(t1 - t0)
            recompute.append(t2 - t1)
            both.append(t2 - t0)
        return [summary(f"{state}: recompute (scores)", recompute), summary(f"{state}: store write", write),
                summary(f"{state}: write + recompute", both)]

    rows = run("toggle", "empty store")
    # fill: every pair labelled, then toggle again
    for uid, dim in pairs:
        if session.label(uid, dim) is None:
            session.set_label(uid, dim, rng.choice((0, 1)))
    rows += run("toggle", "all labelled")

    # the same toggles through the widgets (no browser), and the chart
    from playground.ui.views import PlaygroundApp

    app = PlaygroundApp(session, chart=True)
    widget_times, chart_times = [], []
    for _ in range(min(args.toggles, 100)):
        uid, dim = rng.choice(pairs)
        cid, rid = session._group[uid]
        if (session.case_id, session.response_id) != (cid, rid or None):
            session.go_to(cid, rid or None)
            app.render_case()
        row = next(r for rs in app._rows.values() for r in rs if r.unit_id == uid)
        current = row.toggles[dim].value
        choice = rng.choice([c for c in ("yes", "no", "clear")
                             if c != current and not (c == "clear" and current is None)])
        row.toggles[dim].value = choice
        widget_times.append(app.timings["numbers"] + app.timings["toggle_session"])
        chart_times.append(app.timings["chart"])
    rows.append(summary("all labelled: toggle through widgets (numbers)", widget_times))
    rows.append(summary("all labelled: chart PNG", chart_times))

    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'mean ms':>8}  {'median':>8}  {'p95':>8}  {'max':>8}")
    for name, mean, median, p95, worst in rows:
        print(f"{name:<{width}}  {mean:8.2f}  {median:8.2f}  {p95:8.2f}  {worst:8.2f}")
    worst_p95 = max(r[3] for r in rows if "recompute (scores)" in r[0])
    verdict = "OK" if worst_p95 < TARGET_MS else "OVER TARGET"
    print(f"\nrecompute p95 {worst_p95:.2f} ms; target {TARGET_MS:.0f} ms: {verdict} "
          f"({args.toggles} toggles per state, seed {args.seed})")
    store.close()
    tmp.cleanup()
    return 0 if worst_p95 < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
