"""The golden set's authored verdicts and failure-mode tags (issue 24.6): golden/README.md's table, the variants."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from playground.golden import load_dataset
from playground.model import VARIANTS
from playground.verdict_key import VARIANT_KEY, verdict_key
from playground.verdicts import validate_tag

README = Path(__file__).resolve().parent.parent / "golden" / "README.md"


def _table(heading: str) -> str:
    """The first markdown table after ``heading``."""
    after = README.read_text(encoding="utf-8").split(heading, 1)[1]
    return next(block for block in after.split("\n\n") if block.startswith("| variant |"))


def test_the_authored_key_is_the_readme_table_and_covers_the_variants_table():
    rows = {m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(r"^\| `(\w+)` \| (pass|fail) \| (—|`[a-z-]+`) \|", _table("### Verdicts and "), re.M)}
    readme = {v: (1 if verdict == "pass" else 0, () if tag == "—" else (tag.strip("`"),))
              for v, (verdict, tag) in rows.items()}
    assert readme == VARIANT_KEY
    variants = set(re.findall(r"^\| `(\w+)` \|", _table("### Variants"), re.M))
    assert variants == set(VARIANT_KEY) == set(VARIANTS)
    for _verdict, tags in VARIANT_KEY.values():
        assert all(validate_tag(t) == t for t in tags)
    assert {v for v, (verdict, tags) in VARIANT_KEY.items() if verdict == 1} == {"grounded_correct",
                                                                                  "proper_abstention"}
    assert all(bool(tags) == (verdict == 0) for verdict, tags in VARIANT_KEY.values())  # a fail names its mode


def test_every_authored_response_has_its_variants_key():
    dataset = load_dataset()
    key = verdict_key(dataset)
    assert len(key) == len(dataset.responses) == 200
    assert Counter(k.verdict for k in key.values()) == {0: 134, 1: 66}  # 44 grounded_correct + 22 proper_abstention
    for rid, k in key.items():
        response = dataset.responses[rid]
        assert (k.variant, (k.verdict, k.tags)) == (response.variant, VARIANT_KEY[response.variant])
        if response.variant == "proper_abstention":
            assert dataset.cases[response.case_id].must_abstain  # a pass only where abstaining is right
