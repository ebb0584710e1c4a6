-- incidents.features: every feature of an incident (several for a source outage). Existing
-- rows are filled by migration 007.
ALTER TABLE incidents ADD COLUMN IF NOT EXISTS features VARCHAR[];
