-- The procedures of seed 003's Table 1 but the two pops (pop_skip_locked.sql or
-- pop_naive.sql). Every statement runs in its own transaction under PostgreSQL's default
-- READ COMMITTED; see the module's README for why a pop removes a message exactly once (and
-- delivers it at most once).
SET client_min_messages = warning;

-- add_message(sender, receiver, queue, timestamp, message) -> msg_id
CREATE FUNCTION add_message(p_sender integer, p_receiver integer, p_queue integer,
                            p_sent_at timestamptz, p_body text)
RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO messages (sender_id, receiver_id, queue_id, sent_at, body)
    VALUES (p_sender, p_receiver, p_queue, p_sent_at, p_body)
    RETURNING id;
$$;

-- add_queue() -> queue_id
CREATE FUNCTION add_queue() RETURNS integer LANGUAGE sql AS $$
    INSERT INTO queues DEFAULT VALUES RETURNING id;
$$;

-- delete_queue(queue): its messages go with it (ON DELETE CASCADE).
CREATE FUNCTION delete_queue(p_queue integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM queues WHERE id = p_queue;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no queue %', p_queue USING ERRCODE = 'no_data_found';
    END IF;
END;
$$;

-- query_queues(client): the queues holding messages for the client.
CREATE FUNCTION query_queues(p_client integer) RETURNS SETOF integer LANGUAGE sql STABLE AS $$
    SELECT DISTINCT queue_id FROM messages WHERE receiver_id = p_client ORDER BY queue_id;
$$;

-- add_client(client): the caller chooses the id.
CREATE FUNCTION add_client(p_client integer) RETURNS void LANGUAGE sql AS $$
    INSERT INTO clients (id) VALUES (p_client);
$$;

-- delete_client(client): refused while messages from or to the client remain (the foreign
-- keys would refuse it too, with a message that names a constraint instead).
CREATE FUNCTION delete_client(p_client integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM messages WHERE sender_id = p_client OR receiver_id = p_client) THEN
        RAISE EXCEPTION 'client % still has messages', p_client
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    DELETE FROM clients WHERE id = p_client;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no client %', p_client USING ERRCODE = 'no_data_found';
    END IF;
END;
$$;

-- peek_queue(queue, receiver): the oldest message for the receiver, left in place.
CREATE FUNCTION peek_queue(p_queue integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE sql STABLE AS $$
    SELECT * FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver
    ORDER BY id LIMIT 1;
$$;
