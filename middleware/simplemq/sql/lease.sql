-- The lease mode (at-least-once; the module's README): read, ack and nack. Not the seed's:
-- its tables and procedures are only added, and the 2015 study never calls them.
--
-- A message read for the first time moves out of `messages` into `leases`, in the statement
-- that leases it: no pop can see it from then on, so a popped message and a leased one are
-- never the same row, and the pops (pop_*.sql) stay the seed's, unchanged. The move takes
-- the row as the skip-locked pop does (DELETE of rows chosen FOR UPDATE SKIP LOCKED), so a
-- read and a concurrent pop never both get one message, whichever pop strategy is loaded.
SET client_min_messages = warning;

-- A message some read delivered and no ack removed yet: hidden until visible_at, then read
-- again. deliveries counts the reads that delivered it.
CREATE TABLE leases (
    id bigint PRIMARY KEY,  -- the id the message got in `messages`
    sender_id integer NOT NULL REFERENCES clients (id),
    receiver_id integer NOT NULL REFERENCES clients (id),
    queue_id integer NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    sent_at timestamptz NOT NULL,
    body text NOT NULL,
    visible_at timestamptz NOT NULL,
    deliveries integer NOT NULL CHECK (deliveries >= 1)
) WITH (vacuum_truncate = off);  -- as `messages`: a queue's traffic never leaves the lock free

-- The reads' lookup: one receiver's leases on one queue whose timeout has passed.
CREATE INDEX leases_due ON leases (queue_id, receiver_id, visible_at);

-- Messages read max_deliveries times and due again: kept, never delivered again (pgmq's
-- archive, River's discarded). No foreign keys, so they outlive their queue and clients.
CREATE TABLE dead_letters (
    id bigint PRIMARY KEY,
    sender_id integer NOT NULL,
    receiver_id integer NOT NULL,
    queue_id integer NOT NULL,
    sent_at timestamptz NOT NULL,
    body text NOT NULL,
    deliveries integer NOT NULL,
    dead_at timestamptz NOT NULL
);

-- max_deliveries(): the setting simplemq.max_deliveries (SET, ALTER DATABASE … SET, or the
-- connection's options), 5 where it is not set.
CREATE FUNCTION max_deliveries() RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT coalesce(nullif(current_setting('simplemq.max_deliveries', true), '')::integer, 5);
$$;

-- read_queue(queue, receiver, vt_ms, k): up to k messages for the receiver, oldest first: the
-- leases that came due, then messages never read. Each is hidden for vt_ms milliseconds and
-- its delivery count raised; a due lease already delivered max_deliveries() times moves to
-- dead_letters instead. One statement; plpgsql so that the session caches its plan.
CREATE FUNCTION read_queue(p_queue integer, p_receiver integer, p_vt_ms integer, p_k integer)
RETURNS TABLE (id bigint, sender_id integer, receiver_id integer, queue_id integer,
               sent_at timestamptz, body text, deliveries integer)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_max integer := max_deliveries();
    v_until timestamptz := now() + p_vt_ms * interval '1 millisecond';
BEGIN
    RETURN QUERY
    WITH due AS (
        -- The row lock's re-check drops a lease a concurrent read renewed meanwhile.
        SELECT l.id, l.deliveries FROM leases l
        WHERE l.queue_id = p_queue AND l.receiver_id = p_receiver AND l.visible_at <= now()
        ORDER BY l.id LIMIT p_k FOR UPDATE SKIP LOCKED
    ), dead AS (
        DELETE FROM leases l USING due WHERE l.id = due.id AND due.deliveries >= v_max
        RETURNING l.*
    ), buried AS (
        INSERT INTO dead_letters (id, sender_id, receiver_id, queue_id, sent_at, body,
                                  deliveries, dead_at)
        SELECT d.id, d.sender_id, d.receiver_id, d.queue_id, d.sent_at, d.body, d.deliveries,
               now()
        FROM dead d
        RETURNING dead_letters.id
    ), again AS (
        UPDATE leases l SET visible_at = v_until, deliveries = l.deliveries + 1
        FROM due WHERE l.id = due.id AND due.deliveries < v_max
        RETURNING l.id, l.sender_id, l.receiver_id, l.queue_id, l.sent_at, l.body, l.deliveries
    ), fresh AS (
        -- What the redeliveries leave of k, taken as the skip-locked pop takes a row.
        DELETE FROM messages m WHERE m.id IN (
            SELECT n.id FROM messages n
            WHERE n.queue_id = p_queue AND n.receiver_id = p_receiver
            ORDER BY n.id
            LIMIT p_k - (SELECT count(*) FROM due WHERE due.deliveries < v_max)
            FOR UPDATE SKIP LOCKED)
        RETURNING m.*
    ), leased AS (
        INSERT INTO leases (id, sender_id, receiver_id, queue_id, sent_at, body, visible_at,
                            deliveries)
        SELECT f.id, f.sender_id, f.receiver_id, f.queue_id, f.sent_at, f.body, v_until, 1
        FROM fresh f
        RETURNING leases.id, leases.sender_id, leases.receiver_id, leases.queue_id,
                  leases.sent_at, leases.body, leases.deliveries
    )
    SELECT * FROM again UNION ALL SELECT * FROM leased ORDER BY 1;
END;
$$;

-- ack_message(id): deletes a leased message; false when no lease has that id (acked
-- already, dead-lettered, never read, or no such message). Whether or not its timeout passed.
CREATE FUNCTION ack_message(p_id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM leases WHERE id = p_id;
    RETURN FOUND;
END;
$$;

-- nack_message(id): makes a leased message visible at once (its delivery count stays);
-- false when no lease has that id.
CREATE FUNCTION nack_message(p_id bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    UPDATE leases SET visible_at = now() WHERE id = p_id;
    RETURN FOUND;
END;
$$;
