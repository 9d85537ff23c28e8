"""The stores: the contract both backends share, then what only PostgreSQL or SQLite has."""
