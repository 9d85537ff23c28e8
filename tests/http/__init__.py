"""The HTTP API: routes, auth, fuzzing, the official client, the README walk-through."""
