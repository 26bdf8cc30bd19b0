-- Indexes for the per-agent reads every verify_agent and get_standing makes (found with
-- EXPLAIN QUERY PLAN and kd-bench; docs/performance.md "Reads"): each reads its rows in the
-- order it returns them, so no query builds a temporary B-tree to sort or group.

-- verification::subject_record: an agent's resolved verifications, newest first. Before this
-- it walked every resolved ask of the hub and sorted them.
CREATE INDEX verification_asks_subject
    ON verification_asks (subject_id, status, resolved_ms DESC, ask_id);

-- verification::verifier_record: a reviewer's resolved asks grouped by resolution and stamp,
-- with the latest resolution time (covering: the rows themselves are not read). It also serves
-- every other lookup by reviewer, so the (reviewer, resolution) index of 0007 goes.
CREATE INDEX verification_asks_reviewer_resolved
    ON verification_asks (reviewer, status, resolution, stamp, resolved_ms);
DROP INDEX verification_asks_reviewer;

-- stamps::live: an agent's stamps, oldest first.
CREATE INDEX stamps_agent_issued ON stamps (agent_id, issued_ms, stamp_id);
