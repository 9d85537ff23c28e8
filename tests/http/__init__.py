"""The HTTP API as such: the reference's routes and the runs routes, auth, the protocol across reconnects, fuzzing,
hostile input, the official client, the curl walk-through; a feature's own routes are tested in that feature's
folder."""
