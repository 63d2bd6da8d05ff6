"""wrk, driven from the benchmark: its Lua script (which request each endpoint sends), one
timed run, and its output parsed."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

LUA = """
local max_requests = {max_requests}
local kind = "{kind}"
local path = "{path}"
local max_id = {max_id}
local tokens = {{{tokens}}}
local queries = {{{queries}}}
local cookie = "{cookie}"
local sent = 0
init = function(args)
  math.randomseed(tonumber(tostring({{}}):match("0x(%x+)") or "1", 16) % 2147483647)
end
request = function()
  sent = sent + 1
  if kind == "vote" then
    local id = math.random(1, max_id)
    local token = tokens[math.random(1, #tokens)]
    return wrk.format("PUT", "/api/articles/" .. id .. "/vote/",
      {{["Authorization"] = "Token " .. token, ["Content-Type"] = "application/json"}},
      '{{"value": "up"}}')
  end
  local headers = {{}}
  if cookie ~= "" then headers["Cookie"] = cookie end
  if kind == "article" then
    return wrk.format("GET", "/a/" .. math.random(1, max_id) .. "/", headers)
  end
  if kind == "search" then
    return wrk.format("GET", path .. queries[math.random(1, #queries)], headers)
  end
  return wrk.format("GET", path, headers)
end
response = function(status, headers, body)
  if sent >= max_requests then wrk.thread:stop() end
end
"""

THREADS = 2


def script(
    directory: Path,
    name: str,
    *,
    kind: str,
    path: str,
    requests: int,
    max_id: int,
    tokens: list[str],
    queries: list[str],
    cookie: str,
) -> Path:
    """The Lua script of one endpoint, written in `directory`."""
    lua = directory / f"wrk-{name}.lua"
    lua.write_text(
        LUA.format(
            max_requests=max(1, requests // THREADS),
            kind=kind,
            path=path,
            max_id=max_id,
            tokens=",".join(f'"{t}"' for t in tokens),
            queries=",".join(f'"{q}"' for q in queries) or '""',
            cookie=cookie,
        )
    )
    return lua


def run(wrk: str, url: str, lua: Path, *, connections: int, seconds: float) -> dict[str, Any]:
    """One run of wrk against `url` for `seconds` (whole seconds, at least 1)."""
    duration = max(1, round(seconds))
    out = subprocess.run(
        [
            *(wrk, "-t", str(THREADS), "-c", str(connections), "-d", f"{duration}s"),
            *("--timeout", "5s", "--latency", "-s", str(lua), url),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=duration + 30,
    ).stdout
    return parse_wrk(out)


def parse_wrk(out: str) -> dict[str, float]:
    def latency(pct: str) -> float:
        match = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        if not match:
            return float("nan")
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rps = re.search(r"Requests/sec:\s+([\d.]+)", out)
    done = re.search(r"(\d+) requests in", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    errors = int(non2xx.group(1)) if non2xx else 0
    if sockets:
        errors += sum(int(n) for n in sockets.groups())
    return {
        "rps": float(rps.group(1)) if rps else 0.0,
        "p50": latency("50"),
        "p99": latency("99"),
        "requests": int(done.group(1)) if done else 0,
        "errors": errors,
    }
