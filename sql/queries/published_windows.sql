-- published_windows: the window summary of the sample the warehouse holds for a day, to tell
-- which of two samples of it (the held one and its successor) a publish committed
-- (feco.sampling.day_folder).
-- Inputs: sample_windows. Params: $ds. Output: window_index, events_available, events_sampled, sample_digest.
SELECT window_index, events_available, events_sampled, sample_digest
FROM sample_windows
WHERE ds = $ds
ORDER BY window_index;
