-- Ronin's bench (spec 004 section 6e; docs/decisions.md 352-359): one row per run. The tasks
-- and their answers are drawn from `seed` when the run starts and stay here, server-side,
-- never in the log; a scored run is logged as `ronin.bench_scored` (its score only). The
-- score columns stay NULL until the starting lineage submits within its 15 minutes.
CREATE TABLE ronin_bench_runs (
    run_id       TEXT    PRIMARY KEY,        -- rb_ + 32 hex
    pubkey       TEXT    NOT NULL,           -- the key whose signed start made the run
    seed         TEXT    NOT NULL,           -- the generator's seed (decimal u64)
    tasks        TEXT    NOT NULL,           -- the tasks as handed out, JSON array
    answers      TEXT    NOT NULL,           -- the expected answers, JSON array of strings
    started_ms   INTEGER NOT NULL,
    deadline_s   INTEGER NOT NULL,           -- Unix seconds: a submit is taken up to this second
    submitted_ms INTEGER,
    submitted_by TEXT,
    correct      INTEGER,
    results      TEXT,                       -- JSON array of ten booleans
    elapsed_ms   INTEGER
) STRICT;
CREATE INDEX ronin_bench_runs_key ON ronin_bench_runs (pubkey, started_ms);
CREATE INDEX ronin_bench_runs_scored ON ronin_bench_runs (submitted_ms);
