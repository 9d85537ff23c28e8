-- The tempo-agents store: its own role and database next to Temporal's (created once, on an empty data directory).
CREATE ROLE tempo LOGIN PASSWORD 'tempo';
CREATE DATABASE tempo_agents OWNER tempo;
