"""relationship maps."""
