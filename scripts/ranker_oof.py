"""Print the out-of-fold table of the learned rankers on RAGTruth's tuning part (issue 26 research).

    python scripts/ranker_oof.py [--seed 0] [--folds 5] [--l2 1 10 30]

Reads the tuning part only (:mod:`playground.calibrate.ranker_cv` says how); prints one row per scorer
and kind, then both kinds pooled on the natural-rate claims.
"""
from __future__ import annotations

import argparse

from playground.calibrate.ranker_cv import ranker_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--l2", type=float, nargs="+", default=[1.0, 10.0, 30.0])
    a = ap.parse_args()
    table = ranker_table(folds=a.folds, seed=a.seed, l2s=a.l2)
    print(table.to_string(index=False, na_rep="—"))


if __name__ == "__main__":
    main()
