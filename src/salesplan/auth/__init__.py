"""Authentication and authorization: tokens, principals, scopes, organization context."""
