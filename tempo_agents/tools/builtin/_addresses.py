"""Address rules of the ``web_fetch`` tool: which hosts and IP addresses it must never connect to.

The rules refuse loopback, private, link-local, shared and reserved addresses, plus a few IPv6 ranges that are
reserved in the same sense (documentation, discard, deprecated site-local, local-use NAT64) and the IPv6 forms
that carry an IPv4 address inside them (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo),
which are judged by the IPv4 address they carry.

Host literals are parsed the way ``inet_aton``-style parsers (and so the system resolver) read them, so
``2130706433``, ``0177.0.0.1``, ``0x7f.0.0.1`` and ``127.1`` are all recognised as ``127.0.0.1``.
"""

from __future__ import annotations

import ipaddress
from typing import TypeAlias

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
"""An IPv4 or IPv6 address."""

__all__ = [
    "IPAddress",
    "is_blocked_address",
    "is_blocked_hostname",
    "parse_host_literal",
    "parse_ipv4_literal",
]

_BLOCKED_IPV4 = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "127.0.0.0/8",
        "100.64.0.0/10",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/3",  # everything >= 224.0.0.0: multicast, reserved, broadcast
    )
)

_BLOCKED_IPV6 = tuple(
    ipaddress.IPv6Network(network)
    for network in (
        "::/96",  # unspecified, loopback and the deprecated IPv4-compatible form ::a.b.c.d
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # deprecated site-local
        "ff00::/8",  # multicast
        "100::/64",  # discard-only
        "2001:db8::/32",  # documentation
        "64:ff9b:1::/48",  # local-use NAT64
    )
)

_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")


def is_blocked_hostname(host: str) -> bool:
    """Whether ``host`` is ``localhost`` or a ``*.localhost`` name (any case, trailing dot or not)."""
    name = host.lower()
    if name.endswith("."):
        name = name[:-1]
    return name == "localhost" or name.endswith(".localhost")


def parse_ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """Read ``host`` as an IPv4 literal the way ``inet_aton`` does, or return ``None``.

    One to four dot-separated numbers, each decimal, octal (leading ``0``) or hex (``0x``); the last
    number fills all the bytes that remain (``127.1`` is ``127.0.0.1``, ``2130706433`` is ``127.0.0.1``).
    One trailing dot is accepted, as URL parsers do.
    """
    text = host[:-1] if host.endswith(".") else host
    parts = text.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        value = _parse_ipv4_number(part)
        if value is None:
            return None
        values.append(value)
    *leading, last = values
    if any(value > 0xFF for value in leading):
        return None
    remaining_bytes = 4 - len(leading)
    if last >= 1 << (8 * remaining_bytes):
        return None
    number = 0
    for value in leading:
        number = (number << 8) | value
    number = (number << (8 * remaining_bytes)) | last
    return ipaddress.IPv4Address(number)


def _parse_ipv4_number(part: str) -> int | None:
    if not part:
        return None
    lowered = part.lower()
    if lowered.startswith("0x"):
        digits, base, allowed = lowered[2:], 16, "0123456789abcdef"
    elif len(part) > 1 and part.startswith("0"):
        digits, base, allowed = part[1:], 8, "01234567"
    else:
        digits, base, allowed = part, 10, "0123456789"
    if not digits:
        return 0  # "0x" alone reads as zero
    if any(char not in allowed for char in digits):
        return None
    return int(digits, base)


def parse_host_literal(host: str) -> IPAddress | None:
    """The IP address ``host`` spells (IPv6 with or without brackets, any IPv4 form), or ``None`` for a name."""
    text = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in text:
        try:
            return ipaddress.IPv6Address(text)
        except ValueError:
            return None
    return parse_ipv4_literal(text)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (mapped, translated, NAT64, 6to4, Teredo)."""
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _IPV4_TRANSLATED or address in _NAT64:
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def _is_blocked_ipv4(address: ipaddress.IPv4Address) -> bool:
    return any(address in network for network in _BLOCKED_IPV4)


def is_blocked_address(address: IPAddress, *, allow_loopback: bool = False) -> bool:
    """Whether connecting to ``address`` is forbidden (private, reserved, or carrying such an IPv4 address).

    ``allow_loopback`` (tests only) lets exactly ``127.0.0.0/8`` and ``::1`` through; every other
    private or reserved range, including IPv4-mapped spellings of loopback, stays blocked.
    """
    if isinstance(address, ipaddress.IPv4Address):
        if allow_loopback and address in _LOOPBACK_V4:
            return False
        return _is_blocked_ipv4(address)
    plain = ipaddress.IPv6Address(int(address))  # drop any %zone suffix
    if allow_loopback and plain == _LOOPBACK_V6:
        return False
    if any(plain in network for network in _BLOCKED_IPV6):
        return True
    return any(_is_blocked_ipv4(embedded) for embedded in _embedded_ipv4(plain))
