#!/bin/sh
# The tempo-agents store: its own role and database next to Temporal's (run once, on an empty data directory).
# The role's password comes from the environment (TEMPO_AGENTS_DB_PASSWORD in deploy/compose/.env), never from here.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -v password="$TEMPO_AGENTS_DB_PASSWORD" <<'SQL'
CREATE ROLE tempo LOGIN PASSWORD :'password';
CREATE DATABASE tempo_agents OWNER tempo;
SQL
