"""The official Python client of the salesplan Integration API.

from salesplan_client import Salesplan

client = Salesplan("https://salesplan.example.com", api_key="sp_live_...")
plan = client.plans.get(plan_id, include=["milestones", "tasks"])
for account in client.accounts.list_all():
    ...
"""

from salesplan_client import models, webhooks
from salesplan_client._client import AsyncSalesplan, Salesplan
from salesplan_client._errors import (
    APIConnectionError,
    APIError,
    APIStatusError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    InternalServerError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SalesplanError,
    UnprocessableEntityError,
    WebhookVerificationError,
)
from salesplan_client._models import NOT_GIVEN, NotGiven, NotModified, Page, RawResponse
from salesplan_client._version import __version__

__all__ = [
    "NOT_GIVEN",
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "AsyncSalesplan",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "InternalServerError",
    "NotFoundError",
    "NotGiven",
    "NotModified",
    "Page",
    "PermissionDeniedError",
    "RateLimitError",
    "RawResponse",
    "Salesplan",
    "SalesplanError",
    "UnprocessableEntityError",
    "WebhookVerificationError",
    "__version__",
    "models",
    "webhooks",
]
