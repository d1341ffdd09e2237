"""The outbound guard's rule (contract §12 "Outbound destinations"): which addresses a request
made on a user's behalf may reach, and the errors it answers. `kit.outbound` applies it at every
connection (httpx, `requests`), `kit.outbound_blocking` runs blocking clients.

- Only public addresses are reached. Loopback, private (RFC 1918, 100.64/10, fc00::/7),
  link-local (169.254/16 — cloud metadata — and fe80::/10), unspecified, multicast and other
  reserved addresses are refused, also when wrapped in IPv6 (`::ffff:127.0.0.1`, 6to4, NAT64)
  or spelled oddly (`127.1`, `0x7f000001`, `2130706433`: the resolver reads them as 127.0.0.1,
  and the resolver's answer is what is checked).
- `SALESPLAN_OUTBOUND_ALLOW` (comma-separated CIDRs) re-allows ranges; link-local, unspecified
  and multicast never. Default: empty, except when the public URL's host is loopback (a trial or
  test server), where 127.0.0.0/8 and ::1 are allowed.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

REFUSED = "destination not allowed"
UNREACHABLE = "could not connect to the server"
# Seconds one provider request may take (connect, send, answer).
TIMEOUT_SECONDS = 15

LOOPBACK_NETWORKS: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("127.0.0.0/8"),
    ipaddress.ip_network("::1/128"),
)
SHARED_ADDRESS_SPACE = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
# Never re-allowable by SALESPLAN_OUTBOUND_ALLOW.
NEVER = frozenset({"link_local", "unspecified", "multicast"})


class OutboundError(Exception):
    """An outbound request was not made or failed; `str()` is the text to record."""


class DestinationNotAllowed(OutboundError):
    def __init__(self) -> None:
        super().__init__(REFUSED)


class Unreachable(OutboundError):
    def __init__(self) -> None:
        super().__init__(UNREACHABLE)


# -- classification --------------------------------------------------------------------------


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, translated, compatible, 6to4,
    NAT64)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    value = int(ip)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (IPv4-compatible, deprecated)
        return ipaddress.IPv4Address(value)
    if value >> 32 == 0xFFFF0000:  # ::ffff:0:a.b.c.d (IPv4-translated, SIIT, RFC 2765)
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if any(ip in net for net in NAT64):
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None


def unwrap(ip: IPAddress) -> IPAddress:
    if isinstance(ip, ipaddress.IPv6Address):
        return _embedded_v4(ip) or ip
    return ip


def classify(ip: IPAddress) -> str:
    """public, loopback, private, link_local, unspecified, multicast or reserved."""
    ip = unwrap(ip)
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    if ip.is_link_local:
        return "link_local"
    if ip.is_multicast:
        return "multicast"
    if ip.is_private or (isinstance(ip, ipaddress.IPv4Address) and ip in SHARED_ADDRESS_SPACE):
        return "private"
    if not ip.is_global:
        return "reserved"
    return "public"


def parse_ip(host: str) -> IPAddress | None:
    """The address a literal host stands for, in any spelling the resolver accepts
    (`127.1`, `0x7f000001`, `0177.0.0.1`, `2130706433`, `[::1]`); None for a host name."""
    host = host.strip("[]")
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def parse_networks(value: str) -> tuple[IPNetwork, ...]:
    """`SALESPLAN_OUTBOUND_ALLOW`: comma-separated CIDRs (a bare address is its /32 or /128)."""
    return tuple(
        ipaddress.ip_network(part.strip(), strict=False)
        for part in value.split(",")
        if part.strip()
    )


@dataclass(frozen=True)
class OutboundPolicy:
    allow: tuple[IPNetwork, ...] = ()

    def permits(self, ip: IPAddress) -> bool:
        kind = classify(ip)
        if kind == "public":
            return True
        if kind in NEVER:
            return False
        inner = unwrap(ip)
        return any(inner in net or ip in net for net in self.allow)

    def check(self, addresses: Iterable[IPAddress]) -> None:
        found = list(addresses)
        if not found or not all(self.permits(ip) for ip in found):
            raise DestinationNotAllowed()

    def resolve(self, host: str, port: int) -> list[str]:
        """Blocking: the addresses of `host`, all of them allowed (else DestinationNotAllowed);
        an unknown host is Unreachable."""
        literal = parse_ip(host)
        if literal is not None:
            self.check([literal])
            return [str(unwrap(literal))]
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise Unreachable() from None
        addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in infos))
        ips = [ipaddress.ip_address(a) for a in addresses]
        self.check(ips)
        return [str(unwrap(ip)) for ip in ips]


@lru_cache(maxsize=32)
def _policy(allow: str, public_url: str) -> OutboundPolicy:
    networks = parse_networks(allow)
    host = urlsplit(public_url).hostname or ""
    literal = parse_ip(host)
    if host.lower() in ("localhost", "localhost.") or (
        literal is not None and classify(literal) == "loopback"
    ):
        networks = (*networks, *LOOPBACK_NETWORKS)
    return OutboundPolicy(networks)


def policy(settings: Any) -> OutboundPolicy:
    """The policy of these settings (`outbound_allow`, `public_url`)."""
    return _policy(getattr(settings, "outbound_allow", "") or "", settings.public_url)
