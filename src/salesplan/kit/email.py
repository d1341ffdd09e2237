"""The one e-mail check: something@domain.tld, no spaces, no second @, a top-level label without
a dot. Deliberately loose (delivery is the real test); the JSON schema pattern of `Email` in
accounts/records.py documents the same rule."""

from __future__ import annotations

import re

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")


def is_email(value: str) -> bool:
    return EMAIL.match(value) is not None
