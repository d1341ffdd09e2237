"""leads."""
