"""OAuth 2.0 authorization server: registration, authorize, token, discovery."""
