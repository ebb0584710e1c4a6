"""Systematic sampling of search events from a day of logs.

For each configured window of a day, the window's events are ordered by timestamp (ties by
event id) and every k-th event is taken after a seeded random start, k = available / wanted.
An event is taken with all its rows, so ranked lists stay whole. Only the files that overlap a
window are read (the hour partitions of a folder, the data files a table's metadata places in
it: feco.sources), in two passes: the (event id, timestamp) columns to choose the events, then
the chosen events' rows, one window at a time, so memory is set by the sample and not by
traffic. Logs and samples may live on any filesystem feco.storage knows.

- ``choose``: the windows' files and the choice of their events, with the checks both engines run;
- ``write``: the chosen rows, in memory (``sample_day``) or written to the day's sample folder;
- ``day_folder``: replacing a day's sample folder whole;
- ``study``: this sample measured against simple random and reservoir samples.

The sample folder itself (its files, reading it back) is feco.sample_folder.
"""

from feco.sampling.choose import check_one_window_per_event, check_windows, window_files, window_summary_frame
from feco.sampling.day_folder import replace_day
from feco.sampling.write import SampledWindow, sample_day, sample_window, write_sample
from feco.sources.logfiles import day_windows
from feco.storage import partition_dir

__all__ = ["SampledWindow", "check_one_window_per_event", "check_windows", "day_windows", "partition_dir",
           "replace_day", "sample_day", "sample_window", "window_files", "window_summary_frame", "write_sample"]
