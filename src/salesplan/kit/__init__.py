"""Shared building blocks: ids, time, base schemas, pagination, tenancy scoping."""
