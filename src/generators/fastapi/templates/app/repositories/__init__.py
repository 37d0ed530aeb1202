"""Storage of records: one interface, an in-memory and a PostgreSQL adapter."""
