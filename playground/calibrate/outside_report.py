"""Another kind of scorer beside ours on the real data sets' frozen (or tuning) part, under the same protocol.

``playground calibrate ragtruth --frozen|--tuning-cv`` and ``playground calibrate
begin [--tuning-cv]`` with ``--judge MODEL`` and/or ``--scores CSV`` add rows to
the same table as the support scorer, plain token coverage and ROUGE-1
precision (:func:`outside_report`):

* ``LLM judge (MODEL)``: a yes/no verdict per claim from a local model through
  Ollama (:mod:`playground.calibrate.judge_scorer`); no floor is chosen.  Only
  the part reported is judged: the frozen claims for the frozen report (the
  tuning part needs no judging, there is no floor), the tuning claims for
  ``--tuning-cv``.
* ``--scores CSV`` (row name ``--scores-name``, default the file's stem): a
  user's own per-claim scores (:mod:`playground.calibrate.outside_scores`);
  the floor is chosen on the tuning part as for every scorer, so the CSV must
  cover the tuning part and the part reported.

Everything else is the protocol of :mod:`playground.calibrate.frozen`: floors
from the tuning part only, cluster-bootstrap intervals over the reported
sources.  ``limit`` (``--judge-limit N``) restricts the whole report — every
row, so that they stay comparable — to the first N sources of the reported part in
stable-hash order (:func:`~playground.calibrate.judge_scorer.first_sources`);
the report's ``subset`` says so.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .frozen import AnyScorer, GivenScores, PartReport, only_sources

__all__ = ["DATASETS", "OutsideRun", "OutsideScorers", "outside_report", "outside_run", "split_of"]

#: The data sets an outside scorer can be reported on, by command name.
DATASETS: dict[str, str] = {"ragtruth": "RAGTruth", "begin": "BEGIN"}


@dataclass(frozen=True)
class OutsideScorers:
    """What to add: the judge (``judge`` model, Ollama ``host`` — None: ``$OLLAMA_HOST``, else the default —,
    ``cache`` file — None: the harness's ``.cache/ollama.db``, here under the current folder —, ``timeout``
    seconds — None: the harness's default —, ``limit`` sources), and/or a ``scores`` CSV named
    ``scores_name``.  ``models``: a ready :class:`~playground.harness.llm.OllamaModels` instead of host,
    cache and timeout (tests)."""

    judge: str | None = None
    host: str | None = None
    cache: Path | None = None
    timeout: float | None = None
    limit: int | None = None
    scores: Path | None = None
    scores_name: str | None = None
    progress: bool = False
    models: Any = None

    @property
    def judge_name(self) -> str:
        return f"LLM judge ({self.judge})"

    @property
    def scores_row(self) -> str:
        return self.scores_name or (Path(self.scores).stem if self.scores is not None else "")


def split_of(dataset: str, path: str | Path | Sequence[Any] | None = None) -> tuple[list[Any], list[Any]]:
    """``(tuning, frozen)`` records of ``ragtruth`` (default the two shared files; ``path``: a file or a
    list of files) or ``begin`` (``path``: the file, default the shared one)."""
    if dataset == "ragtruth":
        from .ragtruth import ragtruth_split

        return ragtruth_split(None if path is None else _files(path))
    if dataset == "begin":
        from .begin import begin_split

        return begin_split(path if isinstance(path, (str, Path)) else None)
    raise ValueError(f"unknown data set {dataset!r} (known: {', '.join(DATASETS)})")


def _places(dataset: str, path: str | Path | Sequence[Any] | None, records: Sequence[Any]) -> dict[str, str]:
    """``example_id`` -> ``"<file name> line N"`` of ``records`` (a RAGTruth claim in both files: the first)."""
    if dataset == "ragtruth":
        from .ragtruth import _records, default_ragtruth_path, default_validation_path

        files = [default_ragtruth_path(), default_validation_path()] if path is None else _files(path)
        wanted = {r.example_id for r in records}
        out: dict[str, str] = {}
        for f in files:
            name = Path(f).name if isinstance(f, (str, Path)) else "records"
            for r in _records(f):
                if r.example_id in wanted:
                    out.setdefault(r.example_id, f"{name} line {r.line}")
        return out
    from ..begin import default_begin_path

    name = Path(path if isinstance(path, (str, Path)) else default_begin_path()).name
    return {r.example_id: f"{name} line {r.line}" for r in records}


def _files(path: str | Path | Sequence[Any]) -> list[Any]:
    return [path] if isinstance(path, (str, Path)) else list(path)


def _models(spec: OutsideScorers) -> Any:
    from ..harness.llm import DEFAULT_CACHE_RELPATH, DEFAULT_TIMEOUT, ModelCache, OllamaModels, resolve_host

    cache = ModelCache(spec.cache if spec.cache is not None else DEFAULT_CACHE_RELPATH)
    timeout = DEFAULT_TIMEOUT if spec.timeout is None else spec.timeout
    return OllamaModels(resolve_host(spec.host), timeout=timeout, cache=cache)


def _subset(spec: OutsideScorers, part: str, reported: Sequence[Any], chosen: Sequence[str]) -> str:
    kept = only_sources(reported, set(chosen))
    n_sources = len({r.source_id for r in reported})
    return (f"subset (--judge-limit {spec.limit}): the first {len(chosen)} of {n_sources} {part} sources in "
            f"stable-hash order, {len(kept)} of {len(reported)} claims; every row is on this subset")


def _extra_scorers(dataset: str, spec: OutsideScorers, tuning: Sequence[Any], frozen: Sequence[Any],
                   reported: Sequence[Any], tuning_cv: bool,
                   path: str | Path | Sequence[Any] | None) -> list[tuple[str, AnyScorer]]:
    from .judge_scorer import judge_claims
    from .outside_scores import read_scores

    extra: list[tuple[str, AnyScorer]] = []
    if spec.scores is not None:  # read (and reject) the CSV before any slow judging
        required = {r.example_id: "tuning" for r in tuning}
        if not tuning_cv:
            required.update({r.example_id: "frozen" for r in frozen})
        known = {r.example_id for r in (*tuning, *frozen)}
        extra.append((spec.scores_row, GivenScores(read_scores(spec.scores, required, known, DATASETS[dataset]))))
    if spec.judge is not None:
        models = spec.models if spec.models is not None else _models(spec)
        try:
            verdicts = judge_claims(reported, DATASETS[dataset], models, spec.judge,
                                    where=_places(dataset, path, reported), progress=spec.progress)
            extra.insert(0, (spec.judge_name, verdicts))
        finally:
            if spec.models is None and models.cache is not None:
                models.cache.close()
    return extra


@dataclass(frozen=True)
class OutsideRun:
    """A report with what it was computed from: the ``reported`` records (the frozen or tuning part, or its
    ``--judge-limit`` subset) and the ``scorers`` by row name (ours, then the judge's
    :class:`~playground.calibrate.judge_scorer.JudgeVerdicts`, then the ``--scores``) — what
    :func:`~playground.calibrate.frozen_files.write_report_files` writes the per-claim file from."""

    report: PartReport
    reported: tuple[Any, ...]
    scorers: tuple[tuple[str, AnyScorer], ...]


def outside_report(dataset: str, spec: OutsideScorers, *, tuning_cv: bool = False,
                   path: str | Path | Sequence[Any] | None = None,
                   folds: int = 5, criterion: str = "balanced_accuracy", n_boot: int | None = None, seed: int = 0,
                   confidence: float = 0.95) -> PartReport:
    """The frozen report (or with ``tuning_cv`` the tuning-part cross-validation) of ``dataset``
    (``ragtruth`` / ``begin``) with our scorers and the outside ones of ``spec`` (module docstring).

    ``n_boot`` defaults to 2000 for the frozen report and 1000 for ``tuning_cv``, as the commands'."""
    return outside_run(dataset, spec, tuning_cv=tuning_cv, path=path, folds=folds, criterion=criterion,
                       n_boot=n_boot, seed=seed, confidence=confidence).report


def outside_run(dataset: str, spec: OutsideScorers, *, tuning_cv: bool = False,
                path: str | Path | Sequence[Any] | None = None,
                folds: int = 5, criterion: str = "balanced_accuracy", n_boot: int | None = None, seed: int = 0,
                confidence: float = 0.95) -> OutsideRun:
    """:func:`outside_report` (same arguments) with the reported records and the scorers (:class:`OutsideRun`)."""
    from .ragtruth import real_scorers

    if spec.judge is None and spec.scores is None:
        raise ValueError("no outside scorer: give a judge model or a scores CSV")
    if spec.limit is not None and spec.judge is None:
        raise ValueError("--judge-limit limits the judge: use it with --judge")
    ours = real_scorers()
    names = {n for n, _ in ours}
    for name in (spec.judge_name if spec.judge else None, spec.scores_row if spec.scores else None):
        if name is not None and name in names:
            raise ValueError(f"the scorer name {name!r} is taken by one of ours: choose another (--scores-name)")
    tuning, frozen = split_of(dataset, path)
    part = "tuning" if tuning_cv else "frozen"
    reported = tuning if tuning_cv else frozen
    chosen: list[str] | None = None
    subset = ""
    if spec.limit is not None:
        from .judge_scorer import first_sources

        chosen = first_sources(reported, spec.limit)
        subset = _subset(spec, part, reported, chosen)
        reported = only_sources(reported, set(chosen))
    extra = _extra_scorers(dataset, spec, tuning, frozen, reported, tuning_cv, path)
    scorers = [*ours, *extra]
    sources = None if chosen is None else set(chosen)
    boot = n_boot if n_boot is not None else (1000 if tuning_cv else 2000)
    common: dict[str, Any] = {"criterion": criterion, "n_boot": boot, "seed": seed, "confidence": confidence,
                              "scorers": scorers, "sources": sources, "subset": subset}
    report: PartReport
    if dataset == "ragtruth":
        from .ragtruth import frozen_ragtruth, tuning_cv_ragtruth

        files = None if path is None else _files(path)
        report = (tuning_cv_ragtruth(files, folds=folds, **common) if tuning_cv
                  else frozen_ragtruth(files, **common))
    else:
        from .begin import frozen_begin, tuning_cv_begin

        begin_path = path if isinstance(path, (str, Path)) or path is None else None
        report = (tuning_cv_begin(begin_path, folds=folds, **common) if tuning_cv
                  else frozen_begin(begin_path, **common))
    return OutsideRun(report, tuple(reported), tuple(scorers))
