-- 030: incidents.not_paged, why an incident's headline paged no one (too mild, a small
-- segment, a cross, drops before page_after_days of history), so a listed incident says why
-- it was not paged. Existing rows get NULL: the reason was not recorded.
ALTER TABLE incidents ADD COLUMN IF NOT EXISTS not_paged VARCHAR;
