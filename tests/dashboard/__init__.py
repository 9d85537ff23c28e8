"""The operations dashboard: its routes, and its pages in a real Chromium."""
