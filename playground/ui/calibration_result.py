"""The calibrate page's section for an imported dataset: a tool's result table against the dataset's labels.

A thin view over :func:`playground.calibrate.external_report.calibrate_result`
(what ``playground calibrate external RESULT --dataset NAME`` prints): pick an
imported dataset, upload its RAGAS ``evaluate()`` / DeepEval result table
(CSV, JSONL or Parquet), give the seed the random sample was drawn with and a
target width; the page shows every metric side by side (TPR, TNR and kappa
with intervals, base rate, balanced accuracy, the thresholds and the
cross-validated figures) and, per metric, how many more labels of the random
sample would bring the TPR and TNR intervals under the width — or that it is
reached (:mod:`playground.calibrate.needed`) — and the disagreements with
links that open the playground on that dataset and case.

Element CSS classes for tests: ``pc-result``, ``pc-result-dataset``,
``pc-result-upload``, ``pc-result-seed``, ``pc-result-width``,
``pc-result-table``, ``pc-result-needed``, ``pc-result-disagreements``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..calibrate.external_report import calibrate_result, side_by_side
from ..calibrate.external_samples import read_result
from ..calibrate.needed import needed_for_rates, needed_text
from .html_tables import esc as _esc
from .html_tables import table_html

__all__ = ["ResultSection"]

_COLUMNS = ["scorer", "dimension", "n", "tpr", "tpr_low", "tpr_high", "tnr", "tnr_low", "tnr_high", "kappa",
            "kappa_low", "kappa_high", "base_rate", "balanced_accuracy", "threshold", "best_threshold", "cv_kappa"]


class ResultSection:
    """Section 4 of the calibrate page (module docstring); ``widget`` is its box."""

    def __init__(self, store: Any, root: str | None, link_base: str | None, say: Any, guard: Any,
                 width: float = 0.10):
        import ipywidgets as W

        from ..datasets import dataset_names

        self.store, self.root, self.link_base, self.say = store, root, link_base, say
        names = [n for n in dataset_names(store) if n != "golden"] if store is not None else []
        self.dataset = W.Dropdown(options=names, value=names[0] if names else None, description="dataset")
        self.dataset.add_class("pc-result-dataset")
        self.upload = W.FileUpload(accept=".csv,.jsonl,.parquet", multiple=False, description="result table")
        self.upload.add_class("pc-result-upload")
        self.seed = W.Text(value="", description="sample seed", placeholder="the seed it was drawn with")
        self.seed.add_class("pc-result-seed")
        self.width = W.BoundedFloatText(value=width, min=0.01, max=0.99, step=0.01, description="target width")
        self.width.add_class("pc-result-width")
        self.table = W.HTML()
        self.table.add_class("pc-result-table")
        self.needed = W.HTML()
        self.needed.add_class("pc-result-needed")
        self.disagreements = W.HTML()
        self.disagreements.add_class("pc-result-disagreements")
        hint = ("" if names else "<div class='pc-muted'>no imported dataset in the label store yet "
                "(playground import ragas|deepeval|table FILE --dataset NAME)</div>")
        self.widget = W.VBox([W.HTML(hint), W.HBox([self.dataset, self.upload]), W.HBox([self.seed, self.width]),
                              self.table, self.needed, self.disagreements])
        self.widget.add_class("pc-result")
        self.content: tuple[str, bytes] | None = None
        self.upload.observe(lambda ch: guard(self._on_upload), names="value")
        for w in (self.dataset, self.seed, self.width):
            w.observe(lambda ch: guard(self.refresh), names="value")

    def _on_upload(self) -> None:
        files = self.upload.value
        if files:
            f = files[0] if isinstance(files, (tuple, list)) else next(iter(files.values()))
            self.content = (str(f["name"]), bytes(f["content"]))
            self.refresh()

    def load(self, name: str, content: bytes) -> None:
        """Use a result table given as bytes (what the upload does)."""
        self.content = (name, content)
        self.refresh()

    def refresh(self) -> None:
        """Recompute the section for the current dataset, result table, seed and width."""
        if self.content is None or self.dataset.value is None or self.store is None:
            return
        from ..datasets import open_dataset
        from ..importers.export import label_rows

        name, content = self.content
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / (Path(name).name or "result.csv")
            path.write_bytes(content)
            table = read_result(path)
        opened = open_dataset(self.dataset.value, self.store, self.root)
        labels, who, _ties = label_rows(self.store, opened.catalog(), None)
        seed = self.seed.value.strip() or None
        result = calibrate_result(table, opened, labels, who, sample_seed=seed, n_boot=500,
                                  link_base=self.link_base)
        self.table.value = table_html(side_by_side(result.metrics), _COLUMNS)
        width = float(self.width.value)
        lines = []
        for m in result.metrics:
            c = m.report.comparisons[m.dimension]
            text = ("draw a random sample first (fill in the sample seed): labels people chose say nothing about how "
                    "many more to label" if seed is None else
                    needed_text(needed_for_rates(c.tpr.successes, c.tpr.n, c.tnr.successes, c.tnr.n, width)))
            lines.append(f"<li><b>{_esc(m.column)}</b> ({_esc(m.dimension)}): {_esc(text)}</li>")
        self.needed.value = "<div class='pc-h2'>labels needed</div><ul>" + "".join(lines) + "</ul>"
        frames = [m.report.disagreements().assign(scorer=m.column) for m in result.metrics]
        rows = "".join(table_html(f, ["scorer", "unit_id", "human", "auto", "score", "link"]) for f in frames)
        self.disagreements.value = "<div class='pc-h2'>disagreements</div>" + rows
        self.say(f"{result.matched} of {result.rows} result rows matched to samples of {result.dataset}")
