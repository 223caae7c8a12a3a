-- Idempotent send, beyond the study (op SEND_ONCE): a sender names each message with a key of
-- its own, and a send whose key it used before stores nothing and answers the first send's
-- message id, so a client that resends after a lost reply stores the message once. Keys stay
-- until their sender is deleted. The 2015 study's families never send these.
SET client_min_messages = warning;

CREATE TABLE send_keys (
    sender_id integer NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    key bigint NOT NULL,
    msg_id bigint NOT NULL,
    PRIMARY KEY (sender_id, key)
);

-- add_message_once(sender, receiver, queue, timestamp, message, key) -> msg_id. The key's row
-- is claimed first: a concurrent send of the same key waits for this one's transaction, then
-- finds the key taken and answers its id (or claims it, if this one rolled back).
CREATE FUNCTION add_message_once(p_sender integer, p_receiver integer, p_queue integer,
                                 p_sent_at timestamptz, p_body text, p_key bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO send_keys (sender_id, key, msg_id) VALUES (p_sender, p_key, 0)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        SELECT msg_id INTO v_id FROM send_keys WHERE sender_id = p_sender AND key = p_key;
        RETURN v_id;
    END IF;
    INSERT INTO messages (sender_id, receiver_id, queue_id, sent_at, body)
    VALUES (p_sender, p_receiver, p_queue, p_sent_at, p_body)
    RETURNING id INTO v_id;
    UPDATE send_keys SET msg_id = v_id WHERE sender_id = p_sender AND key = p_key;
    RETURN v_id;
END
$$;
