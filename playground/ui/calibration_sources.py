"""The labellings the calibration page offers (:class:`Sources`), built lazily and cached, no widgets;
settings from the environment (``PLAYGROUND_ROOT``, ``PLAYGROUND_DB``, ``PLAYGROUND_READ_ONLY``,
``PLAYGROUND_RAGTRUTH``, ``PLAYGROUND_CALIBRATE_RUN``) where not given.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .. import calibrate as C

__all__ = ["Sources"]

# --------------------------------------------------------------------------- the labellings


def _env_flag(name: str) -> bool:
    return (os.environ.get(name) or "").strip().lower() in ("1", "true", "yes", "on")


class Sources:
    """The labellings the page offers, built lazily and cached (no widgets)."""

    def __init__(self, root: str | None = None, db: str | None = None, run: str | None = None,
                 ragtruth: str | None = None, read_only: bool | None = None):
        self.root = root if root is not None else (os.environ.get("PLAYGROUND_ROOT") or None)
        self.db = db if db is not None else (os.environ.get("PLAYGROUND_DB") or None)
        self.run = run if run is not None else (os.environ.get("PLAYGROUND_CALIBRATE_RUN") or None)
        self.ragtruth_path = Path(ragtruth or os.environ.get("PLAYGROUND_RAGTRUTH") or C.default_ragtruth_path())
        self.read_only = _env_flag("PLAYGROUND_READ_ONLY") if read_only is None else read_only
        self._cache: dict[str, Any] = {}
        self._tmp: tempfile.TemporaryDirectory | None = None
        self.external: dict[str, C.AutoLabelling] = {}
        self.messages: list[str] = []

    # --- RAGTruth
    def _require_ragtruth(self) -> C.RagTruthCalibration:
        rt = self.ragtruth()
        if rt is None:
            raise FileNotFoundError(f"no RAGTruth claim file at {self.ragtruth_path}")
        return rt

    def ragtruth(self) -> C.RagTruthCalibration | None:
        if "rt" not in self._cache:
            if not self.ragtruth_path.is_file():
                self.messages.append(f"no RAGTruth claim file at {self.ragtruth_path}")
                self._cache["rt"] = None
            else:
                self._cache["rt"] = C.calibrate_ragtruth(self.ragtruth_path, n_boot=1000)
        return self._cache["rt"]

    # --- golden set
    def run_dir(self) -> Path:
        if "run" not in self._cache:
            if self.run:
                self._cache["run"] = Path(self.run)
            else:
                from ..harness.config import load_config
                from ..harness.run import run_harness

                self._tmp = tempfile.TemporaryDirectory(prefix="playground-calibrate-")
                run_harness(load_config(None), self._tmp.name, root=self.root, progress=False)
                self._cache["run"] = Path(self._tmp.name)
        return self._cache["run"]

    def catalog(self):
        if "catalog" not in self._cache:
            from ..units import load_catalog

            self._cache["catalog"] = load_catalog(self.root)
        return self._cache["catalog"]

    def store(self):
        """The label store, or None when there is none yet (a fresh clone)."""
        if "store" not in self._cache:
            from ..store import StoreError, open_store

            try:
                self._cache["store"] = open_store(self.db, create=False, read_only=self.read_only)
            except (StoreError, OSError) as exc:
                self.messages.append(f"no label store ({exc})")
                self._cache["store"] = None
        return self._cache["store"]

    def annotators(self) -> list[str]:
        store = self.store()
        if store is None:
            return []
        return sorted({label.annotator for label in store.current_labels(self.catalog())} - {C.CONSENSUS})

    def human_options(self, dataset: str) -> list[tuple[str, str]]:
        if dataset == "ragtruth":
            return [("RAGTruth human labels", "ragtruth")]
        opts = [("golden answer key", "key")]
        names = self.annotators()
        if names:
            opts.append(("consensus of annotators (store)", "consensus"))
            opts += [(f"annotator: {n}", f"annotator:{n}") for n in names]
        return opts

    def auto_options(self, dataset: str) -> list[tuple[str, str]]:
        if dataset == "ragtruth":
            opts = [("support scorer (project)", "support"), ("plain coverage (baseline)", "plain")]
        else:
            opts = [("harness (default configuration)" if not self.run else f"harness run {self.run}", "harness")]
            if self.judge() is not None:
                opts.append(("Ollama judge (run)", "judge"))
        opts += [(f"external: {n}", f"external:{n}") for n in sorted(self.external)]
        return opts

    def judge(self):
        if "judge" not in self._cache:
            self._cache["judge"] = C.judge_from_run(self.run_dir()) if self.run else None
        return self._cache["judge"]

    def human(self, dataset: str, key: str) -> C.HumanLabelling:
        ck = f"human:{dataset}:{key}"
        if ck not in self._cache:
            if key == "ragtruth":
                self._cache[ck] = self._require_ragtruth().human
            elif key == "key":
                self._cache[ck] = C.key_from_run(self.run_dir())
            elif key == "consensus":
                self._cache[ck] = C.human_consensus(self.store(), self.catalog())
            else:
                self._cache[ck] = C.human_from_store(self.store(), key.split(":", 1)[1], self.catalog())
        return self._cache[ck]

    def auto(self, dataset: str, key: str) -> C.AutoLabelling:
        if key.startswith("external:"):
            return self.external[key.split(":", 1)[1]]
        ck = f"auto:{dataset}:{key}"
        if ck not in self._cache:
            if dataset == "ragtruth":
                rt = self._require_ragtruth()
                self._cache[ck] = rt.autos[0] if key == "plain" else rt.autos[1]
            elif key == "judge":
                self._cache[ck] = self.judge()
            else:
                self._cache[ck] = C.auto_from_run(self.run_dir())
        return self._cache[ck]

    def add_external(self, name: str, content: bytes, dataset: str) -> C.AutoLabelling:
        """Register an uploaded CSV of scores (validated; :class:`CalibrationInputError` lists bad rows)."""
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / (Path(name).name or "scores.csv")
            path.write_bytes(content)
            catalog = None if dataset == "ragtruth" else self.catalog()
            auto = C.auto_from_csv(path, catalog=catalog, dimension="supported" if dataset == "ragtruth" else None,
                                   name=f"external:{Path(name).stem}")
        self.external[Path(name).stem] = auto
        return auto

    def invalidate_store(self) -> None:
        for k in [k for k in self._cache if k.startswith(("human:golden:consensus", "human:golden:annotator"))]:
            del self._cache[k]
