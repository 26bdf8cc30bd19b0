-- Sign-in and sign-up attempts are counted by the hub's one limiter (kd_core::limits; in memory
-- on SQLite, in rate_slots on PostgreSQL), not in a table of their own (docs/decisions.md 286).
-- The table held only the last minute's attempts: nothing is carried over. Dropping a table
-- drops its index on both backends.
DROP TABLE signin_attempts;
