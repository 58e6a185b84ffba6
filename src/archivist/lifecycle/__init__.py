"""Memory over time: session summaries, consolidation, staleness, export and import."""
