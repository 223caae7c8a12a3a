-- Blocking pops and reads, beyond the study (ops POP_WAIT, READ_WAIT): a committed insert, or a
-- nack that makes a lease visible again, notifies channel `simplemq` with "queue:receiver", so
-- a middleware's waiting requests are woken without polling. A middleware started with
-- --notify installs this (a notification costs every send's commit a lock on PostgreSQL's
-- notification queue, so the study's databases never have it).
SET client_min_messages = warning;

CREATE OR REPLACE FUNCTION simplemq_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('simplemq', NEW.queue_id || ':' || NEW.receiver_id);
    RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER messages_notify AFTER INSERT ON messages
FOR EACH ROW EXECUTE FUNCTION simplemq_notify();

CREATE OR REPLACE TRIGGER leases_notify AFTER UPDATE OF visible_at ON leases
FOR EACH ROW WHEN (NEW.visible_at <= now()) EXECUTE FUNCTION simplemq_notify();
