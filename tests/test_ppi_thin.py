"""Issue 42.4 through the command: 20 drawn samples that all pass for people give the exact interval, not
"1.000 [1.000, 1.000]", and the PPI table's more_labels and the labels lines say the same."""
from __future__ import annotations

from calibration_data import case_ids, label_samples, make_labelled

from playground.cli import main
from playground.sampling import ranked


def test_twenty_drawn_samples_all_passing_give_the_exact_interval_and_agreeing_needs(tmp_path, capsys):
    db, result, _human, _scores = make_labelled(tmp_path, 60, base=1.0, label_every=0)
    cases = case_ids(db, "qa")
    label_samples(db, "qa", dict.fromkeys(ranked(cases, "7")[:20], 1))
    assert main(["calibrate", "external", str(result), "--dataset", "qa", "--db", str(db), "--sample-seed", "7",
                 "--boot", "20"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("relevant         20"))
    # human 1.000 [Wilson 0.839, 1.000]; auto 0.900; ppi 1.000 [Clopper-Pearson 0.025^(1/20) = 0.832, 1.000];
    # lam 0; 36 labels for a 0.10-wide exact interval (1 - 0.025^(1/36) = 0.0973), 16 more
    assert row.split()[:13] == ["relevant", "20", "40", "1.000", "0.839", "1.000", "0.900", "1.000", "0.832",
                                "1.000", "0.000", "36", "16"]
    assert "all 20 labelled units are yes (1): the interval is the human labels' own Clopper-Pearson" in row
    assert "[1.000, 1.000]" not in out
    assert ("labels for a 0.1-wide relevant rate interval (the PPI table's more_labels): 16 more; a thin slice, "
            "so that is the exact interval's need, not PPI's") in out
    assert "labels for a 0.1-wide TPR and TNR interval: about 762 more labels" in out
