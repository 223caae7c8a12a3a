-- Queue metrics, beyond the study (op QUEUE_METRICS), as pgmq's metrics() gives them: how many
-- messages wait visible, how many are leased, how many were dead-lettered, and the age of the
-- oldest visible one (by its sender's clock: sent_at; -1 when none waits).
SET client_min_messages = warning;

CREATE FUNCTION queue_metrics(p_queue integer, OUT visible bigint, OUT leased bigint,
                              OUT dead bigint, OUT oldest_age_ms bigint)
LANGUAGE sql STABLE AS $$
    SELECT (SELECT count(*) FROM messages WHERE queue_id = p_queue),
           (SELECT count(*) FROM leases WHERE queue_id = p_queue),
           (SELECT count(*) FROM dead_letters WHERE queue_id = p_queue),
           (SELECT coalesce((extract(epoch FROM now() - min(sent_at)) * 1000)::bigint, -1)
            FROM messages WHERE queue_id = p_queue);
$$;
