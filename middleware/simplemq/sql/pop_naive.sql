-- The pops as PostgreSQL 9.3 (2015, before SKIP LOCKED) allowed: delete the row with the
-- smallest matching id. Two concurrent pops pick the same row; the second waits for the
-- first's row lock, then re-checks its condition on the deleted row (READ COMMITTED's
-- re-check of an updated row) and deletes nothing. It returns empty although other messages
-- may wait: an empty pop, counted, not an error. No row is ever returned twice.
SET client_min_messages = warning;

CREATE FUNCTION pop_queue(p_queue integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE sql AS $$
    DELETE FROM messages WHERE id = (
        SELECT min(id) FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver)
    RETURNING *;
$$;

CREATE FUNCTION pop_message(p_sender integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE sql AS $$
    DELETE FROM messages WHERE id = (
        SELECT min(id) FROM messages WHERE sender_id = p_sender AND receiver_id = p_receiver)
    RETURNING *;
$$;
