"""A pandas index column in a scorer result (issue 40.4): recognised and skipped; a column error quotes its name."""
from __future__ import annotations

import pandas as pd
import pytest

from playground.calibrate.external_samples import read_result
from playground.calibrate.index_column import index_columns, quoted
from playground.calibrate.score_gate import read_run
from playground.errors import DataError


def frame(n: int = 4) -> pd.DataFrame:
    return pd.DataFrame({"user_input": [f"Q{i}?" for i in range(n)], "response": ["A."] * n,
                         "faithfulness": [0.25 * i for i in range(n)]})


def test_the_rule_at_its_boundaries():
    rows = [{"": str(i), "faithfulness": 0.5} for i in range(3)]
    assert index_columns(["", "faithfulness"], rows) == ("",)
    assert index_columns(["Unnamed: 0", "x"], [{"Unnamed: 0": i} for i in range(3)]) == ("Unnamed: 0",)
    assert index_columns(["", "Unnamed: 0", "x"], [{"": str(i), "Unnamed: 0": str(i)} for i in range(2)]) == (
        "", "Unnamed: 0")  # read_csv then to_csv: two of them
    assert index_columns(["__index_level_0__"], [{"__index_level_0__": float(i)} for i in range(2)]) == (
        "__index_level_0__",)
    assert index_columns(["", "x"], [{"": str(i + 1)} for i in range(3)]) == ()  # 1..n: not a default index
    assert index_columns(["", "x"], [{"": "0"}, {"": "2"}]) == ()  # a gap
    assert index_columns(["x", ""], [{"": str(i)} for i in range(3)]) == ()  # not a leading column
    assert index_columns(["id", "x"], [{"id": i} for i in range(3)]) == ()  # a named column keeps its meaning
    assert index_columns(["", "x"], [{"": False}, {"": True}]) == ()
    assert index_columns(["", "x"], [{"": 0.5}]) == ()
    assert index_columns([], []) == () and index_columns([""], []) == ()
    assert quoted(["", "my metric"]) == "'', 'my metric'"


def test_pandas_default_to_csv_reads_as_index_false_does(tmp_path):
    df = frame()
    df.to_csv(tmp_path / "default.csv")  # pandas' default: the index as an unnamed first column
    df.to_csv(tmp_path / "plain.csv", index=False)
    pd.read_csv(tmp_path / "default.csv").to_csv(tmp_path / "resaved.csv")  # 'Unnamed: 0', then '' again
    assert (tmp_path / "default.csv").read_text().splitlines()[0] == ",user_input,response,faithfulness"
    plain = read_result(tmp_path / "plain.csv")
    for name in ("default.csv", "resaved.csv"):
        table = read_result(tmp_path / name)
        assert table.rates == plain.rates == {"faithfulness": "faithfulness"}
        assert [r[3] for r in table.rows] == [r[3] for r in plain.rows] == [
            {"faithfulness": x} for x in (0.0, 0.25, 0.5, 0.75)]
    record = {"scorers": [{"column": "faithfulness", "dimension": "supported"}]}
    scores, n, _table, unrecorded = read_run(tmp_path / "resaved.csv", record)
    assert scores == {"faithfulness": [0.0, 0.25, 0.5, 0.75]} and n == 4 and unrecorded == []


def test_an_empty_column_name_that_is_no_index_is_quoted_in_the_error(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(",user_input,response,faithfulness\n5,Q?,A.,0.5\n6,Q2?,A.,0.7\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_result(path)
    assert [str(p) for p in err.value.problems] == [
        "r.csv: unknown metric column(s) '': map with --metric COLUMN=RATE (rates: context_relevance, faithfulness, "
        "correctness, coverage) or drop with --ignore COLUMN"]
