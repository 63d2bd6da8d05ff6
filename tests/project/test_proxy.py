"""The shipped reverse proxy (docker/nginx/default.conf.template), run by Debian's nginx
(`make nginx` installs it; `make test` does first) in front of a loopback upstream that
echoes what it receives: the forwarding headers carry the real peer, never the client's
say, and /metrics is refused from outside; and /live/ goes to the live endpoint's upstream,
whose Server-Sent Events pass through as they are written (no buffering, no compression)."""

from __future__ import annotations

import http.client
import json
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
BASE = Path(__file__).resolve().parents[2]
TEMPLATE = BASE / "docker" / "nginx" / "default.conf.template"
NGINX = "/usr/sbin/nginx"
CLIENT = "127.0.0.2"  # another loopback address than the upstream's, so the two differ
SPOOF = "203.0.113.9"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Echo(BaseHTTPRequestHandler):
    """The upstream: answers each request with its path and headers, as JSON."""

    protocol_version = "HTTP/1.1"
    seen: list[dict[str, object]] = []

    def do_GET(self) -> None:
        body = json.dumps({"path": self.path, "headers": dict(self.headers.items())}).encode()
        self.seen.append(json.loads(body))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Stream(_Echo):
    """The live upstream: an event stream (chunked, as uvicorn sends it) of a first event,
    then one more each time the test sets `go` (recording when), until the test ends."""

    go = threading.Event()
    written: list[float] = []
    done = threading.Event()

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, "upstream": "live"})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._chunk(b"retry: 3000\n\n")
        number = 0
        while not self.done.is_set():
            if not self.go.wait(0.1):
                continue
            self.go.clear()
            number += 1
            self.written.append(time.monotonic())
            self._chunk(
                b'id: %d-0\nevent: vote\ndata: {"article": 1, "net": %d}\n\n' % (number, number)
            )

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _render(tmp: Path, upstream: int, live: int, ports: dict[str, int]) -> str:
    """The template as the nginx image renders it (envsubst of the VOTESITE_ variables),
    with the listening ports and the certificate's folder moved to the test's."""
    text = TEMPLATE.read_text()
    assert text.count("${") == 2, "only the two upstreams are the image's to substitute"
    for old, new in {
        "${VOTESITE_UPSTREAM}": f"127.0.0.1:{upstream}",
        "${VOTESITE_LIVE_UPSTREAM}": f"127.0.0.1:{live}",
        "listen 80 ": f"listen 127.0.0.1:{ports['http']} ",
        "listen 443 ssl ": f"listen 127.0.0.1:{ports['https']} ssl ",
        "listen 127.0.0.1:8080;": f"listen 127.0.0.1:{ports['own']};",
        "/etc/nginx/tls/": f"{tmp}/tls/",
    }.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture
def proxy(tmp_path: Path) -> Iterator[dict[str, int]]:
    if not Path(NGINX).exists() or not shutil.which("openssl"):
        pytest.skip("needs Debian's nginx and openssl: `make nginx` installs nginx")
    (tmp_path / "tls").mkdir()
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=votesite.test", "-keyout", tmp_path / "tls" / "key.pem",
         "-out", tmp_path / "tls" / "cert.pem"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    _Echo.seen = []
    _Stream.written = []
    _Stream.go.clear()
    _Stream.done.clear()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    live = ThreadingHTTPServer(("127.0.0.1", 0), _Stream)
    live.daemon_threads = True
    for server in (upstream, live):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    ports = {"http": _free_port(), "https": _free_port(), "own": _free_port()}
    site = _render(tmp_path, upstream.server_address[1], live.server_address[1], ports)
    (tmp_path / "site.conf").write_text(site)
    temp = "".join(
        f"{kind}_temp_path {tmp_path}/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    (tmp_path / "nginx.conf").write_text(
        f"daemon off;\nworker_processes 1;\npid {tmp_path}/nginx.pid;\n"
        f"error_log {tmp_path}/error.log;\nevents {{ worker_connections 64; }}\n"
        f"http {{\naccess_log off;\n{temp}include {tmp_path}/site.conf;\n}}\n"
    )
    command = [NGINX, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")]
    check = subprocess.run([*command, "-t"], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr
    server = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert server.poll() is None, server.communicate()[1]
            try:
                socket.create_connection(("127.0.0.1", ports["https"]), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen"
                time.sleep(0.1)
        yield ports
    finally:
        _Stream.done.set()
        server.terminate()
        server.wait(timeout=15)
        upstream.shutdown()
        live.shutdown()


def _connect(port: int, *, tls: bool) -> http.client.HTTPConnection:
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return http.client.HTTPSConnection(
            "127.0.0.1", port, timeout=10, context=context, source_address=(CLIENT, 0)
        )
    return http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(CLIENT, 0))


def _get(
    port: int, path: str, *, tls: bool, headers: dict[str, str]
) -> tuple[int, dict[str, str], bytes]:
    connection = _connect(port, tls=tls)
    try:
        connection.request("GET", path, headers={"Host": "votesite.test", **headers})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


SPOOFED = {
    "X-Forwarded-For": f"{SPOOF}, 127.0.0.1",
    "X-Real-IP": "127.0.0.1",
    "Forwarded": "for=127.0.0.1;proto=https",
    "X-Forwarded-Proto": "http",
    "X-Forwarded-Host": "evil.test",
}


def test_the_proxy_replaces_a_spoofed_forwarded_address_with_the_real_peer(proxy):
    status, _, body = _get(proxy["https"], "/articles/?page=2", tls=True, headers=SPOOFED)
    assert status == 200
    seen = json.loads(body)
    headers = {name.lower(): value for name, value in seen["headers"].items()}
    assert seen["path"] == "/articles/?page=2"
    assert headers["x-forwarded-for"] == CLIENT  # overwritten, not appended to
    assert headers["x-real-ip"] == CLIENT
    assert headers["x-forwarded-proto"] == "https"
    assert headers["host"] == "votesite.test"
    assert "forwarded" not in headers and "x-forwarded-host" not in headers


def test_the_proxy_refuses_metrics_without_asking_the_site(proxy):
    for path in ("/metrics", "/metrics/", "//metrics", "/%6Detrics"):
        status, _, _ = _get(proxy["https"], path, tls=True, headers=SPOOFED)
        assert status == 403, path
    assert not _Echo.seen


def test_plain_http_is_redirected_but_for_the_health_probes(proxy):
    status, headers, _ = _get(proxy["http"], "/new/?x=1", tls=False, headers=SPOOFED)
    assert (status, headers["Location"]) == (301, "https://votesite.test/new/?x=1")
    for path in ("/healthz/live", "/healthz/ready"):
        status, _, body = _get(proxy["http"], path, tls=False, headers=SPOOFED)
        assert status == 200
        headers = {name.lower(): value for name, value in json.loads(body)["headers"].items()}
        assert headers["x-forwarded-for"] == CLIENT
    status, _, _ = _get(proxy["http"], "/metrics", tls=False, headers={})
    assert status == 301  # to the HTTPS server, which refuses it
    assert [seen["path"] for seen in _Echo.seen] == ["/healthz/live", "/healthz/ready"]


def test_the_proxy_answers_its_own_liveness_probe_inside_its_container(proxy):
    connection = http.client.HTTPConnection("127.0.0.1", proxy["own"], timeout=10)
    connection.request("GET", "/healthz/live")
    response = connection.getresponse()
    assert (response.status, response.read()) == (200, b"ok\n")
    assert not _Echo.seen


def _event(response: http.client.HTTPResponse) -> bytes:
    """The next event of a stream (up to its blank line), as the browser reads it."""
    lines = []
    while (line := response.readline()) not in (b"\n", b""):
        lines.append(line)
    return b"".join(lines)


def test_a_live_stream_passes_through_unbuffered_and_uncompressed(proxy):
    """Ensure an event written after the stream is open reaches the client at once (nginx
    buffers an upstream's answer by default, and would hold it back), with no compression."""
    connection = _connect(proxy["https"], tls=True)
    try:
        connection.request(
            "GET",
            "/live/?article=1",
            headers={"Host": "votesite.test", "Accept-Encoding": "gzip", **SPOOFED},
        )
        response = connection.getresponse()
        assert response.status == 200
        assert response.getheader("Content-Type") == "text/event-stream"
        assert response.getheader("Content-Encoding") is None
        assert _event(response) == b"retry: 3000\n"
        for number in (1, 2, 3):
            _Stream.go.set()
            event = _event(response)
            took = time.monotonic() - _Stream.written[-1]
            assert event == b'id: %d-0\nevent: vote\ndata: {"article": 1, "net": %d}\n' % (
                number,
                number,
            )
            assert took < 0.5, f"event {number} took {took:.2f} s through the proxy"
    finally:
        connection.close()
    assert _Echo.seen == [{"path": "/live/?article=1", "upstream": "live"}]


def test_only_the_live_endpoint_goes_to_the_live_upstream(proxy):
    for path in ("/", "/live", "/live/x", "/api/live/", "/new/?live=1"):
        status, _, body = _get(proxy["https"], path, tls=True, headers={})
        assert status == 200 and json.loads(body)["path"] == path, (path, status, body)
    assert not [seen for seen in _Echo.seen if seen.get("upstream") == "live"]
    location = TEMPLATE.read_text().split("location = /live/ {", 1)[1].split("}", 1)[0]
    timeout = re.search(r"proxy_read_timeout (\d+)s;", location)
    assert timeout and int(timeout[1]) >= 4 * 15, "far above the stream's 15 s heartbeat"


def test_the_proxy_speaks_http2_so_open_pages_do_not_use_up_a_browsers_connections(proxy):
    """A browser opens at most 6 HTTP/1.1 connections to a host, and each open page holds one
    for its stream: over HTTP/2 they are streams of one connection."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(["h2", "http/1.1"])
    with (
        socket.create_connection(("127.0.0.1", proxy["https"]), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname="votesite.test") as tls,
    ):
        assert tls.selected_alpn_protocol() == "h2"
