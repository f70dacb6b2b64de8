"""Ludothèque's web service, in rooms (docs/contributors/architecture.md):

- ``http``: the routes (one module per resource), the contract, middleware;
- ``domain``: what a match is and who may see and do what; no Flask, no Redis;
- ``store``: every Redis key and script;
- ``live``: the push hub, followers, event streams, tickets;
- ``background``: bot turns and their scheduling, webhooks, HTTP bots,
  outbound calls;
- ``server``: the gunicorn configuration and what adapts it;

plus the application factory (``app``), the settings and the CLI.
"""
