"""Print the out-of-fold table of the learned rankers on RAGTruth's tuning part (issue 26 research).

    python scripts/ranker_oof.py [--seed 0] [--folds 5] [--l2 1 10 30]
    python scripts/ranker_oof.py --ceiling [--l2 1 10 30]   # in-sample ceilings instead
    python scripts/ranker_oof.py --boosting [--seed 0]       # gradient boosting (scikit-learn, not a dependency)

Reads the tuning part only (:mod:`playground.calibrate.ranker_cv` says how); prints one row per scorer
and kind, then both kinds pooled on the natural-rate claims.
"""
from __future__ import annotations

import argparse

from playground.calibrate.ranker_cv import FEATURE_SETS, in_sample_ceiling, ranker_table, tuning_rows


def ceilings(l2s: list[float]) -> None:
    """Print the in-sample ceiling of each scorer (``in_sample_ceiling``)."""
    rows = tuning_rows()
    variants = [("support (shipped)", ("support",), 0.0), ("weakest sentence (no fit)", ("weakest",), 0.0)]
    variants += [(f"LR {name}, l2={l2:g}", feats, l2) for name, feats in FEATURE_SETS.items() for l2 in l2s]
    for name, feats, l2 in variants:
        c, f, h = in_sample_ceiling(rows, feats, l2)
        print(f"{name:32s} in-sample best pair of floors: {c}/{h} caught by {f} flags, precision {c / f:.4f}")


def boosting(seed: int) -> None:
    """Gradient boosting on every lexical and answer feature, through the same out-of-fold protocol."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier

    from playground.calibrate import ranker_cv as R

    def fit(train, test, features, l2):  # type: ignore[no-untyped-def]
        m = HistGradientBoostingClassifier(max_depth=2, learning_rate=0.05, max_iter=150, min_samples_leaf=20,
                                           random_state=0)
        m.fit(R._matrix(train, features), np.array([r.supported for r in train]))
        return m.predict_proba(R._matrix(test, features))[:, 1]

    rows = tuning_rows()
    caught = hall = flags = 0
    for kind in ("qa", "summary"):
        kr = [r for r in rows if r.kind == kind]
        row = R._row("boosting", kind, kr, *R.oof_flags(kr, FEATURE_SETS["+ answer features"], 0.0, seed=seed, fit=fit))
        print(row)
        c, h = map(int, row["caught"].split("/"))
        caught, hall, flags = caught + c, hall + h, flags + row["flags"]
    print(f"seed {seed} boosting: pooled natural {caught}/{hall} by {flags}, precision {caught / max(flags, 1):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", type=float, nargs="+", default=[1.0, 10.0, 30.0])
    ap.add_argument("--ceiling", action="store_true", help="print the in-sample ceilings instead")
    ap.add_argument("--boosting", action="store_true", help="gradient boosting instead (needs scikit-learn)")
    a = ap.parse_args()
    if a.boosting:
        boosting(a.seed)
        return
    if a.ceiling:
        ceilings(a.l2)
        return
    table = ranker_table(folds=a.folds, seed=a.seed, l2s=a.l2)
    print(table.to_string(index=False, na_rep="—"))


if __name__ == "__main__":
    main()
