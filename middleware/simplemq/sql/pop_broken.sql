-- WRONG ON PURPOSE: the pops the removed-once oracle must catch (tests only). The row is read
-- in one statement and deleted in another, without a lock in between, so two concurrent pops
-- both return it: a duplicate.
SET client_min_messages = warning;

CREATE FUNCTION pop_queue(p_queue integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE plpgsql AS $$
DECLARE
    m messages;
BEGIN
    SELECT * INTO m FROM messages WHERE queue_id = p_queue AND receiver_id = p_receiver
    ORDER BY id LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM pg_sleep(0.001);  -- widens the window a concurrent pop reads the same row in
    DELETE FROM messages WHERE id = m.id;
    RETURN NEXT m;
END;
$$;

CREATE FUNCTION pop_message(p_sender integer, p_receiver integer)
RETURNS SETOF messages LANGUAGE plpgsql AS $$
DECLARE
    m messages;
BEGIN
    SELECT * INTO m FROM messages WHERE sender_id = p_sender AND receiver_id = p_receiver
    ORDER BY id LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    PERFORM pg_sleep(0.001);
    DELETE FROM messages WHERE id = m.id;
    RETURN NEXT m;
END;
$$;
