"""Rate limiting: rolling 60-second windows per token, organization, group and verb class."""
