"""Issue 38: `::ffff:0:a.b.c.d` (the IPv4-translated form of SIIT, RFC 2765) is unwrapped like
the IPv4-mapped form before it is classified: it is the IPv4 address it embeds."""

from __future__ import annotations

import ipaddress

import pytest

from salesplan.kit import outbound
from salesplan.kit.outbound_policy import classify
from tests.outbound.test_guard import _settings


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("::ffff:0:127.0.0.1", "loopback"),
        ("::ffff:0:10.0.0.1", "private"),
        ("::ffff:0:169.254.169.254", "link_local"),
        ("::ffff:0:0.0.0.0", "unspecified"),
        ("::ffff:0:100.64.0.1", "private"),
        ("::ffff:0:93.184.216.34", "public"),
    ],
)
def test_the_translated_form_is_classified_as_the_address_it_embeds(address, kind) -> None:
    assert classify(ipaddress.ip_address(address)) == kind


def test_the_translated_form_of_metadata_is_refused_even_when_ranges_are_allowed() -> None:
    pol = outbound.policy(_settings("https://crm.example.com", "10.0.0.0/8"))
    assert not pol.permits(ipaddress.ip_address("::ffff:0:169.254.169.254"))
    assert not pol.permits(ipaddress.ip_address("::ffff:0:127.0.0.1"))
    assert pol.permits(ipaddress.ip_address("::ffff:0:10.1.2.3"))
