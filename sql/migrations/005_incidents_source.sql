-- incidents.source: the upstream source ([logs.sources]) of an incident that several of its
-- features opened together (a source outage); existing rows are single features: NULL.
ALTER TABLE incidents ADD COLUMN IF NOT EXISTS source VARCHAR;
