"""The bench scripts' own arithmetic: what they derive from what they measure (the capacity plan), on figures."""
