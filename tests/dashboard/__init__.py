"""The operations dashboard as such: its routes, and the pages every feature shares (the inbox, a run's page, the
runs table, signing in), in a real Chromium; a feature's own page is tested in that feature's folder."""
