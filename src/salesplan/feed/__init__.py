"""The feed: the account inbox across e-mail, Slack and calendar, analytics, needs-attention."""
