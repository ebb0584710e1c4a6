"""A realistic search-log generator for demos, tests and benchmarks of feco.

It writes one row per (search event, shown product) with 33 features in five families, a
graded label and the segments monitoring cares about (product group, region, query band,
product age), with the things that make monitoring hard: diurnal and weekly traffic, cold-start
products, a region launched mid-period, day-to-day coverage wobble, and injected incidents whose
ground truth is written beside the logs.

Examples
--------
>>> import datetime as dt
>>> from feco.generator import generate_day
>>> day = generate_day(dt.date(2026, 3, 2), events_per_day=300, new_region_launch=dt.date(2026, 3, 1))
>>> day.column_names[:4]
['event_ts', 'event_id', 'position', 'product_id']
"""

from feco.generator.day import generate_day
from feco.generator.incidents import Incident, Segment, parse_incident
from feco.generator.schema import FEATURE_FAMILIES, FEATURES, LOG_SCHEMA
from feco.generator.world import World, parse_world
from feco.generator.writer import MANIFEST_NAME, generate_logs

__all__ = [
    "FEATURES",
    "FEATURE_FAMILIES",
    "LOG_SCHEMA",
    "MANIFEST_NAME",
    "Incident",
    "Segment",
    "World",
    "generate_day",
    "generate_logs",
    "parse_incident",
    "parse_world",
]
