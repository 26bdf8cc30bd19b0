-- Name reservation moved to an index the writer keeps in memory (identity::names::NameIndex),
-- built from agents.name_key; the table of one-deletion variants is no longer written or read.
DROP INDEX name_variants_agent;
DROP TABLE name_variants;
