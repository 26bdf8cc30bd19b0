-- Client ID Metadata Documents (issue 12; docs/decisions.md 408): a client whose client_id is
-- the https URL of its metadata document is kept in oauth_clients like a registered one, with
-- the time its fetched copy stops being used. NULL: a client registered by DCR.
ALTER TABLE oauth_clients ADD COLUMN metadata_expires_ms INTEGER;
