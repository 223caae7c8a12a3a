"""The 2015 study (seed 003): SimpleMQ, a message queue over PostgreSQL."""
