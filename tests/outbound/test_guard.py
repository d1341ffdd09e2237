"""The outbound guard itself (contract §12 "Outbound destinations"): address classification,
the policy from settings, and both clients refusing before any connection is made."""

from __future__ import annotations

import asyncio
import ipaddress
import threading
import time

import httpx
import pytest
import requests

from salesplan.config import Settings
from salesplan.kit import outbound
from salesplan.kit.outbound import OutboundPolicy, classify, parse_ip
from tests.outbound.conftest import SECRET_BODY, Listener, odd_spellings


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("8.8.8.8", "public"),
        ("2001:4860:4860::8888", "public"),
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("::127.0.0.1", "loopback"),  # IPv4-compatible
        ("10.0.0.1", "private"),
        ("172.16.5.4", "private"),
        ("192.168.1.1", "private"),
        ("100.64.0.1", "private"),  # shared address space
        ("fc00::1", "private"),
        ("fd12:3456::1", "private"),
        ("::ffff:10.0.0.1", "private"),
        ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
        ("169.254.169.254", "link_local"),
        ("fe80::1", "link_local"),
        ("::ffff:169.254.169.254", "link_local"),
        ("64:ff9b::a9fe:a9fe", "link_local"),  # NAT64 of 169.254.169.254
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("192.0.2.1", "private"),  # documentation ranges count as not public
    ],
)
def test_addresses_are_classified(address: str, kind: str) -> None:
    assert classify(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("[::ffff:127.0.0.1]", "::ffff:127.0.0.1"),
        ("[::1]", "::1"),
    ],
)
def test_odd_spellings_are_read_as_the_resolver_reads_them(host: str, address: str) -> None:
    assert parse_ip(host) == ipaddress.ip_address(address)


def test_a_host_name_is_not_a_literal() -> None:
    assert parse_ip("hooks.slack.com") is None


def _settings(public_url: str, allow: str = "") -> Settings:
    return Settings(public_url=public_url, outbound_allow=allow, _env_file=None)  # type: ignore[call-arg]


def test_loopback_is_allowed_only_when_the_public_url_is_loopback() -> None:
    loopback = ipaddress.ip_address("127.0.0.1")
    for url in ("http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"):
        assert outbound.policy(_settings(url)).permits(loopback), url
        assert outbound.policy(_settings(url)).permits(ipaddress.ip_address("::1")), url
        assert not outbound.policy(_settings(url)).permits(ipaddress.ip_address("10.0.0.1"))
    for url in ("http://testserver", "https://crm.example.com"):
        assert outbound.policy(_settings(url)).allow == ()
        assert not outbound.policy(_settings(url)).permits(loopback)


def test_the_allow_setting_re_allows_ranges_but_never_link_local() -> None:
    pol = outbound.policy(
        _settings("https://crm.example.com", "10.0.0.0/8, 169.254.0.0/16,fe80::/10,0.0.0.0/0")
    )
    assert pol.permits(ipaddress.ip_address("10.1.2.3"))
    assert pol.permits(ipaddress.ip_address("::ffff:10.1.2.3"))
    assert pol.permits(ipaddress.ip_address("192.168.0.1"))  # inside 0.0.0.0/0
    assert not pol.permits(ipaddress.ip_address("169.254.169.254"))
    assert not pol.permits(ipaddress.ip_address("fe80::1"))
    assert not pol.permits(ipaddress.ip_address("0.0.0.0"))


def test_a_bad_allow_setting_is_refused_at_start() -> None:
    with pytest.raises(ValueError, match="not-a-network"):
        _settings("https://crm.example.com", "10.0.0.0/8,not-a-network")


def test_every_resolved_address_must_be_allowed() -> None:
    pol = OutboundPolicy((ipaddress.ip_network("127.0.0.1/32"),))
    # localhost resolves to 127.0.0.1 and, on most machines, ::1 too: one refused is enough
    resolved = {str(info[4][0]) for info in __import__("socket").getaddrinfo("localhost", 80)}
    if "::1" in resolved:
        with pytest.raises(outbound.DestinationNotAllowed):
            pol.resolve("localhost", 80)
    assert pol.resolve("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(outbound.Unreachable):
        pol.resolve("no-such-host.invalid", 80)


def test_requests_session_refuses_before_connecting(catcher: Listener) -> None:
    session = outbound.guard_session(requests.Session(), OutboundPolicy())
    for url in [*odd_spellings(catcher.port), "http://169.254.169.254/latest/meta-data/"]:
        with pytest.raises(outbound.DestinationNotAllowed):
            session.get(url, timeout=5)
    assert catcher.connections == 0


def test_requests_session_checks_every_redirect(catcher: Listener, redirector: Listener) -> None:
    pol = OutboundPolicy((ipaddress.ip_network("127.0.0.2/32"),))
    session = outbound.guard_session(requests.Session(), pol)
    with pytest.raises(outbound.DestinationNotAllowed):
        session.request("PROPFIND", redirector.url(), timeout=5)
    assert redirector.connections == 1
    assert catcher.connections == 0


def test_requests_session_reaches_an_allowed_address(catcher: Listener) -> None:
    pol = OutboundPolicy((ipaddress.ip_network("127.0.0.1/32"),))
    session = outbound.guard_session(requests.Session(), pol)
    assert session.get(catcher.url(), timeout=5).content == SECRET_BODY
    assert catcher.connections == 1


async def test_httpx_client_refuses_before_connecting(catcher: Listener) -> None:
    async with outbound.async_client(OutboundPolicy()) as http:
        for url in [*odd_spellings(catcher.port), "http://169.254.169.254/latest/meta-data/"]:
            # httpx itself refuses the octal spelling as an invalid URL
            with pytest.raises((outbound.DestinationNotAllowed, httpx.InvalidURL)):
                await http.post(url, content=b"{}")
    assert catcher.connections == 0


async def test_httpx_client_reaches_an_allowed_address_and_follows_no_redirect(
    catcher: Listener, redirector: Listener
) -> None:
    pol = OutboundPolicy((ipaddress.ip_network("127.0.0.0/8"),))
    async with outbound.async_client(pol) as http:
        assert (await http.post(catcher.url(), content=b"{}")).content == SECRET_BODY
        assert (await http.post(redirector.url(), content=b"{}")).status_code == 307
    assert catcher.connections == 1


async def test_blocking_calls_run_on_their_own_pool() -> None:
    name = await outbound.run_blocking(lambda: threading.current_thread().name)
    assert name.startswith("outbound")
    assert not (await asyncio.to_thread(lambda: threading.current_thread().name)).startswith(
        "outbound"
    )


async def test_a_request_past_its_deadline_is_cut_and_its_thread_freed(
    blackhole: Listener,
) -> None:
    """A server that accepts and never answers: the request ends at its deadline because its
    socket is shut down, not when the (longer) socket timeout would end it."""
    pol = OutboundPolicy((ipaddress.ip_network("127.0.0.3/32"),))

    def fetch() -> None:
        session = outbound.guard_session(requests.Session(), pol)
        with outbound.deadline(1):
            session.get(blackhole.url(), timeout=60)

    started = time.monotonic()
    with pytest.raises(requests.ConnectionError):  # the call itself ended: its thread is free
        await outbound.run_blocking(fetch, seconds=1)
    assert time.monotonic() - started < 4
    assert blackhole.connections == 1


async def test_one_key_holds_at_most_its_share_of_the_pool() -> None:
    running = 0
    most = 0
    lock = threading.Lock()

    def work() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.2)
        with lock:
            running -= 1

    await asyncio.gather(*(outbound.run_blocking(work, key="org-a") for _ in range(10)))
    assert most == outbound.PER_KEY_CALLS


def test_a_call_that_got_its_slot_late_does_not_start_a_fresh_deadline() -> None:
    """The wait for a slot counts (contract §12: 15 s in all): a call queued until just before
    its deadline gets a first request bounded by that deadline, not 15 s more (CI saw a request
    end at 30 s), and later requests of the call get their own 15 s."""
    from salesplan.kit.outbound import _Call, _local, deadline

    queued = time.monotonic() + 0.5
    call = _Call(queued_deadline=queued)
    _local.call = call
    try:
        with deadline(outbound.TIMEOUT_SECONDS):
            assert call.deadline is not None and call.deadline <= queued
        with deadline(outbound.TIMEOUT_SECONDS):
            assert call.deadline is not None
            assert call.deadline > time.monotonic() + outbound.TIMEOUT_SECONDS - 1
    finally:
        _local.call = None
