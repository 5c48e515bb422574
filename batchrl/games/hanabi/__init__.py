"""Hanabi: rules (more to come: knowledge features, bots, logs)."""
