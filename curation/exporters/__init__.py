"""Exporting records back to the formats they came from."""
