"""Redis: every key and Lua script of the service, in one place."""
