"""What the ``playground calibrate`` handlers share: the error guard, the harness run, the units of ``--dataset``.

:func:`guard` turns the calibration's input errors into one message and exit 1 (the store's, a missing file and
an unwritable ``--out`` into one ``error:`` line); :func:`harness_run` is ``--run`` or a fresh run of the default
configuration in a temporary folder; :func:`dataset_catalog` is the units of ``--dataset`` (the shipped set when
absent).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .calibrate_output import open_label_store
from .calibrate_real import err

__all__ = ["calibration_samples", "dataset_catalog", "guard", "harness_run", "root_catalog", "with_dataset_links"]


def guard(fn):
    """``fn`` with the calibration's errors as one message: input errors exit 1 with their report; the store's,
    a missing file and an unwritable ``--out`` (a file, permissions, disk full) one ``error:`` line."""

    def wrapper(args: argparse.Namespace) -> int:
        from ..calibrate import CalibrationInputError
        from ..datasets import DatasetNotFound
        from ..importers.ragtruth import RagTruthError
        from ..store import LabelImportError, StoreError

        out = getattr(args, "out", None)
        if out is not None and Path(out).exists() and not Path(out).is_dir():
            return err(f"--out {out} is a file: name a folder for the tables and charts")
        try:
            return fn(args)
        except (CalibrationInputError, RagTruthError, LabelImportError) as exc:
            print(str(exc), file=sys.stderr)
            return 1
        except (StoreError, DatasetNotFound) as exc:
            return err(str(exc))
        except FileNotFoundError as exc:
            return err(f"no such file: {exc.filename}")
        except OSError as exc:  # a folder that cannot be written (permissions, disk full)
            return err(f"cannot write {exc.filename or out}: {exc.strerror or exc}")

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper



def harness_run(args) -> Path:
    """The run folder: ``--run``, or a fresh run of the default configuration in a temporary folder."""
    if args.run is not None:
        if not (args.run / "units.csv").is_file():
            raise FileNotFoundError(2, "no units.csv", str(args.run / "units.csv"))
        return args.run
    from ..harness.config import load_config
    from ..harness.run import run_harness

    tmp = Path(tempfile.mkdtemp(prefix="playground-calibrate-"))
    print(f"no --run given: running the harness with the default configuration in {tmp} ...", file=sys.stderr)
    run_harness(load_config(None), tmp, root=args.root, progress=False)
    return tmp


def calibration_samples(store, dataset: str | None = None) -> list[tuple[str, object]]:
    """``(name, seed)`` of the store's calibration samples of ``dataset`` (None: the shipped set)."""
    from ..datasets import SHIPPED

    lister = getattr(store, "assignments", None)
    if lister is None:
        return []
    return [(a.name, a.seed) for a in lister() if getattr(a, "kind", "") == "calibration_sample"
            and getattr(a, "dataset", SHIPPED) == (dataset or SHIPPED)]


def root_catalog(root):
    from ..units import load_catalog

    return load_catalog(root)


def dataset_catalog(args: argparse.Namespace, *, any_dataset: bool = False) -> dict:
    """unit_id -> Unit of --dataset: the shipped set when absent (every dataset's units with ``any_dataset``)."""
    from ..datasets import SHIPPED, open_dataset

    name = getattr(args, "dataset", None)
    if name in (None, SHIPPED) and not (any_dataset and name is None):
        return root_catalog(args.root)
    from ..units import load_catalog

    with open_label_store(args.db, create=False, read_only=True) as store:
        if name is None:
            return load_catalog(args.root, None, store)
        return open_dataset(name, store, args.root).catalog()


def with_dataset_links(report, dataset: str | None) -> None:
    """Point the report's disagreement links at ``dataset`` and its PPI advice at ``calibrate sample --dataset``."""
    from ..datasets import SHIPPED, dataset_link, with_dataset

    if dataset in (None, SHIPPED):
        return
    for comp in report.comparisons.values():
        if len(comp.disagreements):
            comp.disagreements["link"] = [dataset_link(c, dataset) for c in comp.disagreements["case_id"]]
    if "note" in report.ppi.columns:
        advice = with_dataset("playground calibrate sample", dataset)
        report.ppi["note"] = [n.replace("playground calibrate sample", advice) if isinstance(n, str) else n
                              for n in report.ppi["note"]]
