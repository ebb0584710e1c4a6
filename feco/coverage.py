"""Coverage states: mergeable counts per window, feature and segment.

For every sampled row (a query–product pair) and feature, a value is *present* when it is
neither NULL nor NaN and *covered* when it is present and passes the feature's rule. States
keep the counts (n_rows, n_present, n_covered), never ratios, so days, windows and segments
merge exactly. Counts are taken once at the finest segment grain and rolled up from there.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING, Literal

import duckdb
import polars as pl

from feco import dimensions
from feco.config import Config, CoverageRule
from feco.dimensions import AGE_BAND, COLUMN, PRODUCT_AGE, QUERY_BAND
from feco.errors import DataError
from feco.warehouse import quote, sql

if TYPE_CHECKING:
    from feco.sample_folder import SampleFiles

GLOBAL = "all"
# The dimensions a row is labelled with (segment_rows), as row_segments.sql names them.
SEGMENT_DIMENSIONS = list(dimensions.names())
ROW_NUMBER = "feco_row_number"
KEPT_DAY_EVENTS = "kept_day_events"  # the relation of a day's kept events per query
# The type a dimension's column has where the compiled counts label rows as the SQL does: text
# (the labels are the values themselves), and dates for product ages. Others go to the SQL.
COMPILED_TYPES = {COLUMN: pl.String, QUERY_BAND: pl.String, PRODUCT_AGE: pl.Date, AGE_BAND: pl.Date}

STATE_SCHEMA = {
    "ds": pl.Date,
    "window": pl.Int16,
    "feature": pl.String,
    "segment_dim": pl.String,
    "segment_value": pl.String,
    "n_rows": pl.Int64,
    "n_present": pl.Int64,
    "n_covered": pl.Int64,
}
STATUS_SCHEMA = {"ds": pl.Date, "feature": pl.String, "status": pl.String, "detail": pl.String, "rule": pl.String}


def compute_states(
    sample: pl.DataFrame | SampleFiles,
    *,
    ds: date,
    config: Config,
    references: dict[str, float] | None = None,
    band_history: pl.DataFrame | None = None,
    day_events: pl.DataFrame | None = None,
    counting: Literal["compiled", "sql"] = "compiled",
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Count rows, present and covered values per window, feature and segment.

    Parameters
    ----------
    sample
        The day's sampled rows, with a ``window`` column: a frame, or the sample files
        (``feco.sample_folder.sample_files``), which DuckDB counts streaming, never holding the
        rows in memory.
    references
        Frozen reference statistics for features whose rule is ``> reference_mean|median``.
    band_history
        Sampled events per query (``query``, ``n``) of the other days that set the query
        bands together with this one (:func:`band_history`); None: this day alone.
    counting
        ``"compiled"``: the finest counts in compiled loops, a batch of rows at a time
        (``feco.coverage_kernel``; segment columns of other types than text, and dates for
        product age, fall back to the SQL); ``"sql"``: ``sql/coverage/finest_counts.sql``.
        Both give the same counts.

    Returns
    -------
    The ``coverage_states`` rows and one ``feature_status`` row per configured feature
    (``ok`` or ``missing_column``: a feature absent from the logs is counted as never
    present and the run goes on), with the rule it was counted under (``counted_rule``).

    Examples
    --------
    Two windows of a day, four rows; ``price`` is NULL in the last one (present in 3 rows,
    covered by ``> 0`` in 2), ``ctr`` is zero in one row:

    >>> from pathlib import Path
    >>> from feco.config import parse_config
    >>> config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
    ...                        "logs": {"features": ["price", "ctr"]}, "segments": {"dimensions": ["region"]}},
    ...                       source=Path("feco.toml"))
    >>> sample = pl.DataFrame({"window": [0, 0, 0, 1], "event_id": [1, 1, 2, 3],
    ...                        "region": ["DE", "DE", "US", "DE"],
    ...                        "price": [1.5, 0.0, 2.0, None], "ctr": [0.1, 0.2, 0.0, 0.3]})
    >>> states, status = compute_states(sample, ds=date(2026, 1, 5), config=config)
    >>> (states.filter(segment_dim="all").group_by("feature").agg(pl.col("n_rows", "n_present", "n_covered").sum())
    ...  .sort("feature").rows())
    [('ctr', 4, 4, 3), ('price', 4, 3, 2)]
    >>> states.filter(segment_dim="region", feature="price").sort("window", "segment_value").select(
    ...     "window", "segment_value", "n_rows", "n_covered").rows()
    [(0, 'DE', 2, 1), (0, 'US', 1, 1), (1, 'DE', 1, 0)]
    >>> status.get_column("status").to_list()
    ['ok', 'ok']
    """
    schema = sample.schema
    kinds = value_kinds(schema, config=config)
    with duckdb.connect() as conn:
        _register_sample(conn, sample)
        query_type = schema.get(config.logs.query, pl.String)
        conn.register("band_history", band_history_like(band_history, query_type))
        if counting == "compiled" and _compiles(schema, config=config):
            if day_events is not None:
                conn.register(KEPT_DAY_EVENTS, band_history_like(day_events, query_type))
            finest = _compiled_counts(conn, sample, kinds, ds=ds, config=config, references=references or {},
                                      kept=day_events is not None)
        else:
            statement, params = finest_counts_query(list(schema), kinds, ds=ds, config=config,
                                                    references=references or {}, quote=quote)
            finest = conn.sql(statement, params=params).pl()
    states, status = states_from_finest(finest, ds=ds, config=config, kinds=kinds)
    rules = {f: counted_rule(f, config=config, references=references or {}) for f in config.logs.features}
    return states, status.with_columns(pl.col("feature").replace_strict(rules).alias("rule"))


def counted_rule(feature: str, *, config: Config, references: dict[str, float]) -> str:
    """The rule a feature's coverage is counted under, as stored with each day: a reference
    rule with its frozen value, so that another reference period reads as another rule.

    Examples
    --------
    >>> from pathlib import Path
    >>> from feco.config import parse_config
    >>> config = parse_config({"paths": {"logs": "l", "samples": "s", "warehouse": "w.duckdb"},
    ...                        "logs": {"features": ["a", "b"]},
    ...                        "coverage": {"rules": {"b": "> reference_median"},
    ...                                     "reference": {"start": date(2026, 1, 1), "end": date(2026, 1, 7)}}},
    ...                       source=Path("feco.toml"))
    >>> counted_rule("a", config=config, references={}), counted_rule("b", config=config, references={"b": 0.25})
    ('> 0', '> reference_median (0.25)')
    """
    rule = config.coverage.rule_for(feature)
    return str(rule) + (f" ({threshold_of(feature, rule, references):.6g})" if rule.reference else "")


def _compiles(schema: pl.Schema, *, config: Config) -> bool:
    """Whether the compiled counts label rows as the SQL does (COMPILED_TYPES)."""
    types = _compiled_types()
    return all(schema.get(column) in (None, types[source])
               for source, column in _segment_columns(config).items() if column is not None)


def _segment_columns(config: Config) -> dict[str, str | None]:
    """The column behind each ``[logs]`` key segments come from (feco.dimensions), None where
    no configured segment uses it (a key read for one of its dimensions serves them all)."""
    used = {d for dims in config.segments.names() for d in dims}
    return {source: getattr(config.logs, source) if used & set(names) else None
            for source, names in dimensions.by_source().items()}


def _compiled_types() -> dict[str, pl.DataType]:
    """COMPILED_TYPES by ``[logs]`` key (the dimensions of one key want one type)."""
    return {dimension.source: COMPILED_TYPES[dimension.kind] for dimension in dimensions.DIMENSIONS}


def _raw_column(source: str) -> str:
    """The name row_segments.sql reads the column of a ``[logs]`` key under."""
    return f"raw_{source}"


def _compiled_counts(conn: duckdb.DuckDBPyConnection, sample: pl.DataFrame | SampleFiles, kinds: dict[str, str], *,
                     ds: date, config: Config, references: dict[str, float], kept: bool) -> pl.DataFrame:
    """finest_counts.sql's rows from feco.coverage_kernel; the query bands from
    query_bands.sql over ``conn``'s ``sample_rows`` (``kept``: over its KEPT_DAY_EVENTS)."""
    from feco import coverage_kernel as kernel  # numba: only where the counts are taken

    statement, params = query_bands_query(list(sample.schema), config=config, quote=quote, kept=kept)
    columns = _segment_columns(config)
    segments = kernel.Segments.of(
        conn.sql(statement, params=params).arrow().read_all(), columns=columns,
        new_since=ds - timedelta(days=config.segments.new_product_days),
        age_edges=age_band_edges(ds, config=config), age_labels=[label for label, _ in config.segments.age_bands()])
    rules = []
    for feature in config.logs.features:
        rule = config.coverage.rule_for(feature)
        rules.append(kernel.FeatureRule(None if kinds[feature] == "missing" else feature, rule.op == ">",
                                        threshold_of(feature, rule, references)))
    types = _compiled_types()
    texts = [c for source, c in columns.items() if c is not None and types[source] == pl.String]
    read = ["window", *dict.fromkeys([*(c for c in columns.values() if c), *(r.column for r in rules if r.column)])]
    if isinstance(sample, pl.DataFrame):
        batches = sample.select(read).to_arrow(compat_level=pl.CompatLevel.oldest()).to_batches(kernel.BATCH_ROWS)
    else:
        batches = sample.batches(read, dictionaries=texts, batch_size=kernel.BATCH_ROWS)
    return kernel.finest_counts(batches, features=rules, segments=segments)


def _register_sample(conn: duckdb.DuckDBPyConnection, sample: pl.DataFrame | SampleFiles) -> None:
    """The sample as the relation ``sample_rows``."""
    if isinstance(sample, pl.DataFrame):
        conn.register("sample_rows", sample)
    else:
        sample.register(conn)


def value_kinds(schema: dict[str, pl.DataType], *, config: Config) -> dict[str, str]:
    """How each configured feature's values reach the counts: ``float`` (NaN read as NULL),
    ``cast`` (booleans and all-NULL columns, as 0/1 floats), ``plain`` (integers) or
    ``missing`` (not in the logs). A feature of another type is a data error."""
    kinds = {}
    for feature in config.logs.features:
        dtype = schema.get(feature)
        if dtype is None:
            kinds[feature] = "missing"
        elif dtype == pl.Boolean or dtype == pl.Null:
            kinds[feature] = "cast"
        elif dtype.is_float():
            kinds[feature] = "float"
        elif dtype.is_numeric():
            kinds[feature] = "plain"
        else:
            raise DataError(f"feature column '{feature}' is {dtype}, not numeric")
    return kinds


def finest_counts_query(columns: list[str], kinds: dict[str, str], *, ds: date, config: Config,
                        references: dict[str, float], quote) -> tuple[str, dict]:
    """``sql/coverage/finest_counts.sql`` for a sample with these columns and feature kinds
    (``value_kinds``), and the parameters it binds; ``quote`` quotes the sample's column names.

    Features travel as v0..vN, so no configured name is ever pasted into SQL raw, and
    thresholds are bound parameters.
    """
    counts, thresholds = [], {}
    for index, feature in enumerate(config.logs.features):
        rule = config.coverage.rule_for(feature)
        counts.append(f"count(v{index}) AS p{index}, count_if(v{index} {rule.op} $t{index}) AS c{index}")
        thresholds[f"t{index}"] = threshold_of(feature, rule, references)
    carried = ['"window"', *feature_values(kinds, config=config, quote=quote)]
    segmented, params = row_segments_query(columns, carried, ds=ds, config=config, quote=quote)
    statement = (sql("coverage/finest_counts").replace("{dimensions}", ", ".join(SEGMENT_DIMENSIONS))
                 .replace("{row_segments}", segmented.rstrip().rstrip(";"))
                 .replace("{feature_counts}", ",\n       ".join(counts)))
    return statement, params | thresholds


def row_segments_query(columns: list[str], carried: list[str], *, ds: date, config: Config,
                       quote) -> tuple[str, dict]:
    """``sql/coverage/row_segments.sql`` for a sample with these columns, carrying the
    ``carried`` select expressions through, and the parameters it binds."""
    bands, params = query_bands_query(columns, config=config, quote=quote)
    sources = _segment_sources(columns, config=config, quote=quote)
    selected = [f"{expression} AS {name}" for name, expression in sources.items()] + carried
    age_bands = config.segments.age_bands()
    statement = (sql("coverage/row_segments").replace("{age_bands}", _age_band_case(age_bands))
                 .replace("{column_dimensions}", _column_dimension_values())
                 .replace("{canonical_columns}", ",\n           ".join(selected))
                 .replace("{query_bands}", bands.rstrip().rstrip(";")))
    params |= {f"age_since_{i}": edge for i, edge in enumerate(age_band_edges(ds, config=config))}
    return statement, params | {"new_since": ds - timedelta(days=config.segments.new_product_days)}


def age_band_edges(ds: date, *, config: Config) -> list[date]:
    """The first-seen dates that part the age bands on ``ds``, youngest first: a product
    first seen after edge i is in band i or younger."""
    return [ds - timedelta(days=low) for _, low in config.segments.age_bands()[1:]]


def _column_dimension_values() -> str:
    """row_segments.sql's values of the dimensions that are a column's own values, each
    followed by a comma (the derived dimensions follow them in the file)."""
    values = [f"coalesce(nfc_normalize(CAST(sample.{_raw_column(d.source)} AS STRING)), 'unknown') AS {d.name}"
              for d in dimensions.DIMENSIONS if d.kind == COLUMN]
    return "".join(f"{value},\n       " for value in values)


def _age_band_case(bands: list[tuple[str, int]]) -> str:
    """The CASE naming a row's age band: younger than an edge when first seen after the
    edge's date (the labels come from the config's whole numbers, not from data)."""
    whens = [f"WHEN CAST(sample.raw_product_first_seen AS DATE) > $age_since_{i} THEN '{label}'"
             for i, (label, _) in enumerate(bands[:-1])]
    return (f"CASE WHEN sample.raw_product_first_seen IS NULL THEN 'unknown' {' '.join(whens)} "
            f"ELSE '{bands[-1][0]}' END")


def query_bands_query(columns: list[str], *, config: Config, quote, kept: bool = False) -> tuple[str, dict]:
    """``sql/coverage/query_bands.sql`` for a sample with these columns (each query's band),
    and the parameters it binds; the day's events per query counted from ``sample_rows`` by
    query_events.sql, or (``kept``) read from the relation KEPT_DAY_EVENTS."""
    sources = _segment_sources(columns, config=config, quote=quote)
    if kept:
        day_events = f"SELECT query, n FROM {KEPT_DAY_EVENTS}"
    else:
        day_events = sql("coverage/query_events").format(event_id=sources["event_id"], query=sources["raw_query"])
    statement = sql("coverage/query_bands").replace("{day_events}", day_events.strip())
    return statement, {"head_share": config.segments.head_share, "torso_share": config.segments.torso_share}


def segment_rows(rows: pl.DataFrame, *, ds: date, config: Config,
                 band_history: pl.DataFrame | None = None) -> pl.DataFrame:
    """Each of ``rows``' segment values, as coverage counts them that day: a column per
    dimension (SEGMENT_DIMENSIONS: ``product_group``, ``region``, ``query_band``, ``product_age``,
    ``age_band``; NFC-normalised, 'unknown' where a value is NULL or its dimension is not
    configured), one row per input row, in order.

    ``rows`` are sampled rows with the team's column names; ``band_history`` as for
    :func:`compute_states` (the bands take the day's events and those of the days before).

    Examples
    --------
    >>> from pathlib import Path
    >>> from feco.config import parse_config
    >>> config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
    ...                        "logs": {"features": ["x"]}, "segments": {"dimensions": ["region"]}},
    ...                       source=Path("feco.toml"))
    >>> rows = pl.DataFrame({"event_id": [1, 1, 2], "region": ["DE", "DE", None], "x": [1.0, 0.0, 2.0]})
    >>> segment_rows(rows, ds=date(2026, 1, 5), config=config).get_column("region").to_list()
    ['DE', 'DE', 'unknown']
    """
    carried = [f"{quote(ROW_NUMBER)} AS {ROW_NUMBER}"]
    statement, params = row_segments_query([*rows.columns, ROW_NUMBER], carried, ds=ds, config=config, quote=quote)
    with duckdb.connect() as conn:
        conn.register("sample_rows", rows.with_row_index(ROW_NUMBER))
        conn.register("band_history", band_history_like(band_history, rows.schema.get(config.logs.query, pl.String)))
        labelled = conn.sql(statement, params=params).pl()
    return labelled.sort(ROW_NUMBER).select(SEGMENT_DIMENSIONS)


def _segment_sources(available: list[str], *, config: Config, quote) -> dict[str, str]:
    """The event id and the columns segments come from, as expressions under fixed names
    (NULL where no configured segment uses them)."""
    selected = {"event_id": quote(config.logs.event_id)}
    taken_by = dimensions.by_source()
    for source, column in _segment_columns(config).items():
        if column is not None and column not in available:
            raise DataError(f"segment column '{column}' (for {taken_by[source][0]}) not in the logs")
        selected[_raw_column(source)] = "CAST(NULL AS STRING)" if column is None else quote(column)
    return selected


def feature_values(kinds: dict[str, str], *, config: Config, quote) -> list[str]:
    """The features as v0..vN, NaN as NULL."""
    values = []
    for index, feature in enumerate(config.logs.features):
        value = {"missing": "CAST(NULL AS FLOAT)", "cast": f"CAST({quote(feature)} AS FLOAT)",
                 "float": f"CASE WHEN isnan({quote(feature)}) THEN NULL ELSE {quote(feature)} END",
                 "plain": quote(feature)}[kinds[feature]]
        values.append(f"{value} AS v{index}")
    return values


def states_from_finest(finest: pl.DataFrame, *, ds: date, config: Config,
                       kinds: dict[str, str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Every configured segment grain rolled up from the finest counts (window, the
    dimensions, n_rows, p0, c0, …), and the ``feature_status`` rows."""
    features = config.logs.features
    missing = [f for f in features if kinds[f] == "missing"]
    finest = finest.rename({f"{kind}{i}": f"{kind}:{f}" for i, f in enumerate(features) for kind in "pc"})
    states = pl.concat([_roll_up(finest, dims, features) for dims in config.segments.names()])
    status = pl.DataFrame(
        [(ds, f, "missing_column" if f in missing else "ok",
          "column not in the logs" if f in missing else None, None) for f in features],
        schema=STATUS_SCHEMA, orient="row",
    )
    return states.with_columns(pl.lit(ds).alias("ds")).select(STATE_SCHEMA.keys()), status


def band_history(ds: date, config: Config) -> pl.DataFrame | None:
    """Sampled events per query of the other days of ds's band window (those sampled: the
    band_days days ending at ds, or the warehouse's first band_days days, :func:`first_window`),
    for the query bands of ds; None when no segment uses query bands or the bands take one day."""
    from feco.sample_folder import sampled_query_events

    days = _band_days(ds, config)
    return sampled_query_events(days, config.paths.samples, event_id=config.logs.event_id,
                                query=config.logs.query) if days else None


def day_events(ds: date, config: Config) -> pl.DataFrame | None:
    """The day's sampled events per query, kept beside its sample (counted and kept if they
    are not); None when no segment uses query bands."""
    from feco.sample_folder import sampled_query_events

    if not _uses_query_bands(config):
        return None
    return sampled_query_events([ds], config.paths.samples, event_id=config.logs.event_id, query=config.logs.query)


def band_histories(days: list[date], config: Config) -> dict[date, pl.DataFrame | None]:
    """:func:`band_history` of each of ``days``, every day's sample counted once (the days of a
    replay's reference share most of theirs)."""
    from feco.sample_folder import sampled_query_events

    others = {ds: _band_days(ds, config) for ds in days}
    counts = {day: sampled_query_events([day], config.paths.samples, event_id=config.logs.event_id,
                                        query=config.logs.query)
              for day in sorted({day for window in others.values() for day in window})}
    return {ds: pl.concat([counts[day] for day in window]).group_by("query").agg(pl.col("n").sum()) if window else None
            for ds, window in others.items()}


def _band_days(ds: date, config: Config) -> list[date]:
    """The other days whose sampled events set ``ds``'s query bands with its own: the
    ``band_days`` days ending at it, or the warehouse's first ``band_days`` days when it is
    one of them (:func:`first_window`); none when no segment uses query bands."""
    if not _uses_query_bands(config):
        return []
    window = first_window(ds, config) or [ds - timedelta(days=d) for d in range(config.segments.band_days)]
    return [day for day in window if day != ds]


def first_window(ds: date, config: Config) -> list[date]:
    """The warehouse's first ``band_days`` days (from its first sampled one) when ``ds`` is
    one of them, else none (nor without query bands). They share one set of query bands,
    drawn from all of them sampled so far, so the days of a reference period taken early
    count the same segments as the weeks after: bands drawn from fewer days are blurrier
    (more queries on the wrong side of an edge), and a tail band counted on a team's first
    days is not the one counted four weeks on. Each of them counted restates those before it
    (``feco.tasks.compute_coverage``)."""
    from feco.sample_folder import first_sampled_day

    first = first_sampled_day(config.paths.samples) if _uses_query_bands(config) else None
    if first is None or not first <= ds < first + timedelta(days=config.segments.band_days):
        return []
    return [first + timedelta(days=d) for d in range(config.segments.band_days)]


def _uses_query_bands(config: Config) -> bool:
    return "query_band" in {d for dims in config.segments.names() for d in dims}


def band_history_like(history: pl.DataFrame | None, query_type: pl.DataType) -> pl.DataFrame:
    """The history's counts with queries of the sample's type, so the join needs no cast."""
    if history is None:
        return pl.DataFrame(schema={"query": query_type, "n": pl.Int64})
    return history.select(pl.col("query").cast(query_type), pl.col("n").cast(pl.Int64))


def threshold_of(feature: str, rule: CoverageRule, references: dict[str, float]) -> float:
    if rule.reference is None:
        return rule.threshold
    if feature not in references:
        raise DataError(f"no reference {rule.reference} stored for feature '{feature}'")
    return references[feature]


def _roll_up(finest: pl.DataFrame, dims: tuple[str, ...], features: list[str]) -> pl.DataFrame:
    """The counts of one segment grain: a row per window, segment value and feature."""
    sums = [pl.col(c).sum() for c in finest.columns if c == "n_rows" or c[:2] in ("p:", "c:")]
    grouped = finest.group_by(["window", *dims]).agg(sums)
    segment_value = pl.concat_str(list(dims), separator=" x ") if dims else pl.lit(GLOBAL)
    segments = grouped.select(pl.col("window").cast(pl.Int16), pl.lit(" x ".join(dims) or GLOBAL).alias("segment_dim"),
                              segment_value.alias("segment_value"), pl.col("n_rows").cast(pl.Int64))
    # each segment's row, then its features in order: the counts' matrices read row by row
    rows = segments.join(pl.DataFrame({"feature": features}), how="cross", maintain_order="left_right")
    return rows.with_columns(**{
        f"n_{kind}": grouped.select(pl.col(f"{kind[0]}:{f}").cast(pl.Int64) for f in features).to_numpy().ravel()
        for kind in ("present", "covered")})


def reference_statistics(sample: pl.DataFrame, *, config: Config) -> dict[str, float]:
    """Mean or median of each reference-rule feature's present values over ``sample``.

    Computed once over the configured reference period and stored: a threshold taken from the
    current day would make coverage about 50% by construction.
    """
    statistics = {}
    for feature in config.logs.features:
        rule = config.coverage.rule_for(feature)
        if rule.reference is None:
            continue
        if feature not in sample.columns:
            raise DataError(f"feature '{feature}' is not in the reference period's logs")
        values = sample.get_column(feature).cast(pl.Float64).fill_nan(None).drop_nulls()
        if values.len() == 0:
            raise DataError(f"feature '{feature}' has no values in the reference period")
        statistics[feature] = float(values.mean() if rule.reference == "mean" else values.median())
    return statistics
