-- Batches, beyond the study (ops SEND_BATCH, POP_BATCH, ACK_BATCH): many sends, pops or acks in
-- one request, one statement and one transaction. The 2015 study's families never send these.
SET client_min_messages = warning;

-- add_messages(sender, receiver, queue, timestamp, messages) -> the messages' ids, in order:
-- the identity's values are drawn row by row, in the order the bodies come.
CREATE FUNCTION add_messages(p_sender integer, p_receiver integer, p_queue integer,
                             p_sent_at timestamptz, p_bodies text[])
RETURNS SETOF bigint LANGUAGE sql AS $$
    INSERT INTO messages (sender_id, receiver_id, queue_id, sent_at, body)
    SELECT p_sender, p_receiver, p_queue, p_sent_at, b
    FROM unnest(p_bodies) WITH ORDINALITY AS t (b, n) ORDER BY n
    RETURNING id;
$$;

-- pop_queue_batch(queue, receiver, k): removes and returns up to k of the oldest messages for
-- the receiver, skipping those another pop holds (as pop_skip_locked.sql's pop_queue does).
CREATE FUNCTION pop_queue_batch(p_queue integer, p_receiver integer, p_k integer)
RETURNS SETOF messages LANGUAGE sql AS $$
    DELETE FROM messages WHERE id IN (
        SELECT id FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver
        ORDER BY id LIMIT p_k FOR UPDATE SKIP LOCKED)
    RETURNING *;
$$;

-- ack_messages(ids): deletes the leased messages among them; the ids it deleted (an id no
-- lease has is left out, as ack_message answers false for it).
CREATE FUNCTION ack_messages(p_ids bigint[]) RETURNS SETOF bigint LANGUAGE sql AS $$
    DELETE FROM leases WHERE id = ANY (p_ids) RETURNING id;
$$;
