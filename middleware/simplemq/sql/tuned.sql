-- Beyond the study (`mwlab mq bench --tuned-schema`): the indexes SimpleMQ's pops and reads
-- need, and its per-message statements in PL/pgSQL. PostgreSQL 15 plans the statements of a
-- LANGUAGE sql function again on every call when it cannot inline it (a DELETE or INSERT ...
-- RETURNING never is), while PL/pgSQL prepares them once per session and keeps the plan.
-- The study's families run seed 003's schema and procedures without this file.
SET client_min_messages = warning;

-- The pops and the lease reads filter on queue and receiver and take the oldest id: one index
-- answers the filter and the order, where seed 003's single-column indexes answer one column.
CREATE INDEX IF NOT EXISTS messages_queue_receiver_id ON messages (queue_id, receiver_id, id);
CREATE INDEX IF NOT EXISTS messages_sender_receiver_id ON messages (sender_id, receiver_id, id);

CREATE OR REPLACE FUNCTION pop_queue(p_queue integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY DELETE FROM messages WHERE id = (
        SELECT id FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING *;
END
$$;

CREATE OR REPLACE FUNCTION pop_message(p_sender integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY DELETE FROM messages WHERE id = (
        SELECT id FROM messages WHERE sender_id = p_sender AND receiver_id = p_receiver
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING *;
END
$$;
