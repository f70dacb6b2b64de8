"""Peer benchmark: Ludothèque against boardgame.io 0.50.2 on Dékal (``python -m bench.peer``).

The Node side (``package.json``, ``dekal.js``, ``server.js``, ``client.js``)
lives beside this file; ``__main__.py`` runs it all. See ``README.md`` here.
"""
