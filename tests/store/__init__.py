"""The stores: the contract both backends share, then what only PostgreSQL or SQLite has, and a PostgreSQL outage
longer than the store's retry window (runs, HTTP and readers through it; a busy pool)."""
