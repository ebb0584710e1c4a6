-- oncall_silences: the silences in force at $now (not over, not lifted), soonest to end first,
-- for `feco status` and `feco unsilence`.
-- Inputs: incident_actions. Params: $now (TIMESTAMPTZ).
-- Output: silence_id, feature, segment_dim, segment_value, source (NULL: any), held_until, reason,
-- actor, acted_at.
SELECT action_id AS silence_id, feature, segment_dim, segment_value, source, held_until, reason, actor, acted_at
FROM incident_actions
WHERE action = 'silence'
  AND held_until > $now
  AND action_id NOT IN (SELECT unsilences FROM incident_actions WHERE action = 'unsilence')
ORDER BY held_until, acted_at, action_id;
