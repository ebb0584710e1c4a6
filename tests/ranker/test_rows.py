"""Reading a sampled day in bounded memory: whole events a batch at a time (the same sums as the
day held whole, whatever the batches, and when an event's rows are apart), and a replay's
events chosen from a few row groups, whole, without reading the rest."""

from datetime import date

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from feco.ranker import rows as reader
from feco.ranker.daily import ltr_rows, ndcg_sums, read_day, served_sums
from feco.ranker.model import predict_scores, train_ranker
from feco.ranker.rows import DRAW, chosen_events, event_batches
from logbuilder import FEATURES, make_config, make_events

DAY = date(2026, 1, 3)


def write_day(config, *, shuffled: bool = False, group_rows: int = 50) -> pl.DataFrame:
    """The day's sample as two window files of small row groups; ``shuffled``: the second
    file's rows out of event order."""
    events = make_events(DAY, events=200, seed=2, rows_per_event=4)
    day = config.paths.samples / f"ds={DAY}"
    for window, part in enumerate((events.head(400), events.tail(400))):
        if shuffled and window == 1:
            part = part.sample(fraction=1.0, shuffle=True, seed=3)
        (day / f"window={window}").mkdir(parents=True)
        part.write_parquet(day / f"window={window}" / "part-0.parquet", row_group_size=group_rows)
    pl.DataFrame({"window": [0, 1]}).write_parquet(day / "_windows.parquet")
    return events


@pytest.mark.parametrize("shuffled", [False, True])
def test_batches_hold_whole_events_and_the_same_draws_whatever_their_size(tmp_path, shuffled):
    config = make_config(tmp_path)
    events = write_day(config, shuffled=shuffled)
    columns = ["event_id", "position", "label", *FEATURES]
    small = list(event_batches(DAY, config, columns, seed=1, batch_rows=64))
    large = pl.concat(event_batches(DAY, config, columns, seed=1, batch_rows=10_000))
    ids = [set(batch["event_id"]) for batch in small]
    assert len(small) > 5 and sum(len(i) for i in ids) == len(set().union(*ids)) == 200  # no event split
    whole = pl.concat(small)
    assert whole.height == events.height
    key = ["event_id", "position"]
    assert whole.sort(key).select(*key, DRAW).equals(large.sort(key).select(*key, DRAW))


def test_the_days_sums_read_a_batch_at_a_time_are_those_of_the_day_held_whole(tmp_path, monkeypatch):
    config = make_config(tmp_path, ranker={"segments": ["region"]})
    events = write_day(config, shuffled=True)
    frame = ltr_rows(events, config, keep={"region": "region", "position": "position"})
    model = train_ranker(frame, features=FEATURES, num_boost_round=5,
                         params={"objective": "lambdarank", "min_data_in_leaf": 5, "verbose": -1})
    monkeypatch.setattr(reader, "BATCH_ROWS", 64)
    served, scored, kept = read_day(DAY, config, model, label="label", threshold=0.5)
    expected = ndcg_sums(frame, predict_scores(model, frame), segments=["region"])
    assert_frame_equal(scored.select(expected.columns), expected, check_exact=False, check_dtypes=False)
    assert_frame_equal(served, served_sums(frame, segments=["region"]), check_exact=False, check_dtypes=False)
    assert 0 < kept.height < events.height and (kept[DRAW] < 0.5).all()


def test_a_replay_reads_a_few_row_groups_and_keeps_whole_events(tmp_path, monkeypatch):
    config = make_config(tmp_path)
    events = write_day(config, group_rows=10)  # 80 row groups of 10 rows: events of 4 rows cross their edges
    read = []
    group_rows = reader._group_rows
    monkeypatch.setattr(reader, "_group_rows", lambda *args: read.append(args[1]) or group_rows(*args))
    found = chosen_events([DAY], config, ["event_id", "position", "label"], events=12, seed=1,
                          segment=("region", "DE"))
    assert reader.MIN_GROUPS <= len(read) < 80
    assert found["event_id"].n_unique() == 12 and found["in_segment"].all()
    chosen = events.filter(pl.col("event_id").is_in(found["event_id"].unique().implode()))
    assert found.height == chosen.height and set(chosen["region"]) == {"DE"}  # every row of every chosen event
    assert np.array_equal(found.sort("event_id", "position")["label"].to_numpy(),
                          chosen.sort("event_id", "position")["label"].to_numpy())
