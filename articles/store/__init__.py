"""The store: Redis keys, Lua scripts, and the services (writes) and selectors (reads) over them."""
