-- The pops as PostgreSQL-backed queues do them today (pgmq, River): the oldest matching row
-- not locked by another pop is locked, then deleted and returned in the same statement.
-- SKIP LOCKED arrived in PostgreSQL 9.5. A row locked by a concurrent pop is skipped, so two
-- pops never wait for each other, and a pop returns empty only when no unlocked message
-- matches.
SET client_min_messages = warning;

-- pop_queue(queue, receiver): removes and returns the oldest message for the receiver.
CREATE FUNCTION pop_queue(p_queue integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE sql AS $$
    DELETE FROM messages WHERE id = (
        SELECT id FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING *;
$$;

-- pop_message(sender, receiver): removes and returns the oldest message from that sender.
CREATE FUNCTION pop_message(p_sender integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE sql AS $$
    DELETE FROM messages WHERE id = (
        SELECT id FROM messages WHERE sender_id = p_sender AND receiver_id = p_receiver
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING *;
$$;
