-- SimpleMQ's schema (seed 003, section 1.1.1): clients, queues and messages, with the seed's
-- foreign keys and indexes. Loaded into an empty database once per run.
SET client_min_messages = warning;

-- The caller chooses a client's id (the seed's add_client(client)).
CREATE TABLE clients (
    id integer PRIMARY KEY
);

CREATE TABLE queues (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);

-- ASCII payloads, so characters are bytes. Messages are ordered by id, never by the client's
-- clock (sent_at is what the sender stamped, kept for its own bookkeeping).
-- vacuum_truncate off: a vacuum that may shorten the file waits up to 5 s for a lock the
-- queue's traffic never leaves free, and no other vacuum of the table runs meanwhile, so dead
-- tuples piled up to 3,276 between vacuums instead of under about 750 (40 clients, small messages).
CREATE TABLE messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sender_id integer NOT NULL REFERENCES clients (id),
    receiver_id integer NOT NULL REFERENCES clients (id),
    -- Deleting a queue deletes its messages.
    queue_id integer NOT NULL REFERENCES queues (id) ON DELETE CASCADE,
    sent_at timestamptz NOT NULL,
    body text NOT NULL
) WITH (vacuum_truncate = off);

-- The seed's indexes: ids are indexed by their primary keys; on messages, one per reference.
CREATE INDEX messages_queue_id ON messages (queue_id);
CREATE INDEX messages_sender_id ON messages (sender_id);
CREATE INDEX messages_receiver_id ON messages (receiver_id);
