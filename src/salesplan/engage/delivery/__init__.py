"""Engage delivery: idempotent sends, the outbox worker, tracking, replies, suppression."""
