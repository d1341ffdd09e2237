"""salesplan: the Integration API server for sales account planning and CRM."""

__version__ = "1.0.0"
API_PREFIX = "/api/v1"
