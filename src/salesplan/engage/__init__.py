"""Engage: templates, drafts, lists, campaigns and their delivery."""
