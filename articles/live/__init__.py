"""The live endpoint (issue 25): Server-Sent Events fed by the stream `live:` through one hub
per process (hub.py), served over ASGI (views.py)."""
