"""A run's journal as its activities write it: text deltas in the background, every write in order."""
