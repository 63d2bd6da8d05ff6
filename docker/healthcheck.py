"""The site container's healthcheck (compose.yaml): its gunicorn answers /healthz/live.

Liveness only, no dependency: a Redis or database outage makes the site answer 503 on its
own, and restarting the container would not cure it (/healthz/ready says so to a balancer).
Sends a Host the site accepts (the first of DJANGO_ALLOWED_HOSTS), else Django refuses it.
"""

from __future__ import annotations

import os
import sys
import urllib.request


def main() -> int:
    hosts = [h.strip().lstrip(".") for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",")]
    host = next((h for h in hosts if h and h != "*"), "localhost")
    port = os.environ.get("VOTESITE_PORT", "8000")
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/healthz/live", headers={"Host": host}
    )
    try:
        with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback
            return 0 if response.status == 200 else 1
    except OSError as exc:
        print(f"healthcheck: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
