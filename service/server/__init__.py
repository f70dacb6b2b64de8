"""The server around the app: gunicorn's configuration and what adapts it
(one-write answers, the garbage collector of a process with many streams)."""
