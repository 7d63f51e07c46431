"""The human arm: a Prolific-style participant flow (steps, lists, services, views)."""
