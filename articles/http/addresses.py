"""Who is asking, for the pages and the API alike: the client's address (rate limits) and
the logged-in user's id."""

from __future__ import annotations

import functools
import ipaddress

from django.http import HttpRequest

from articles import conf
from articles.errors import LoginRequired

# Headers a reverse proxy adds: a request carrying any of them came through one (ours sets
# them all, overwriting whatever the client sent), or claims to have.
FORWARDING_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_X_REAL_IP", "HTTP_FORWARDED")


def client_address(request: HttpRequest) -> str:
    """The client's address, trusting X-Forwarded-For only as far as our own proxies.

    With 0 proxies (the default) the header is ignored; with N the client is the N-th
    address from the right, the one the outermost trusted proxy saw, so a client cannot
    pick its own address by sending the header. The result is a canonical address or
    "unknown" (REMOTE_ADDR is empty on a unix socket, or carries a zone such as
    "fe80::1%eth0"): nothing a client sends becomes part of a key.
    """
    remote = str(request.META.get("REMOTE_ADDR", ""))
    proxies = conf.num_proxies()
    forwarded = str(request.META.get("HTTP_X_FORWARDED_FOR", ""))
    if proxies > 0 and forwarded:
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        if hops:
            remote = hops[-min(proxies, len(hops))]
    return _canonical(remote)


def direct_peer(request: HttpRequest) -> str:
    """The address of the connection's other end when the request came straight to the
    site, not through a proxy (no forwarding header at all); "unknown" otherwise.

    For what no header may grant (/metrics, /healthz's figures): behind the proxy every
    request carries X-Forwarded-For, so what the proxy relays never counts as internal,
    whatever the header says, and a client reaching the site directly is judged by its
    own address only.
    """
    if any(request.META.get(name) for name in FORWARDING_HEADERS):
        return "unknown"
    return _canonical(str(request.META.get("REMOTE_ADDR", "")))


@functools.lru_cache(maxsize=1024)  # bounded: the header's values are the client's choice
def _canonical(address: str) -> str:
    """Parsing an address took a tenth of a bare request; the few a worker sees repeat."""
    try:
        return str(ipaddress.ip_address(address.split("%", 1)[0]))
    except ValueError:
        return "unknown"


def user_pk(request: HttpRequest) -> int:
    """The logged-in user's pk, for views that let only logged-in users in."""
    pk = request.user.pk if request.user.is_authenticated else None
    if not isinstance(pk, int):
        raise LoginRequired()
    return pk
