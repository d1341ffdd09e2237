"""opportunities."""
