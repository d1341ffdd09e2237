"""Server-rendered pages: sign-in, consent, developer settings."""
