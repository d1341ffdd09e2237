"""Outbound webhooks (contract §13): endpoints, the event outbox, signed delivery by the worker."""
