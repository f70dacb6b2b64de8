"""Hostile clients, each test a reproduction of an attack that once worked:
over HTTP, on the live side, on the bots and outbound calls, on the deal."""
