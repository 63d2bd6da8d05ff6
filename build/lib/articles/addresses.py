"""Who is asking, for the pages and the API alike: the client's address (rate limits) and
the logged-in user's id."""

from __future__ import annotations

import ipaddress

from django.http import HttpRequest

from articles import conf
from articles.errors import NotAllowed


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
    try:
        return str(ipaddress.ip_address(remote.split("%", 1)[0]))
    except ValueError:
        return "unknown"


def user_pk(request: HttpRequest) -> int:
    """The logged-in user's pk, for views that let only logged-in users in."""
    pk = request.user.pk if request.user.is_authenticated else None
    if not isinstance(pk, int):
        raise NotAllowed("Log in first.")
    return pk
