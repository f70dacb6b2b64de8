"""Where a stream finds the answer it writes: the WSGI environ's key under
which the server (``service/server/wire.py``) hands the app the answer
being written, so that the push hub may write to an idle stream's socket
itself (``service.live.followers.Shortcut``). Nothing else: the server
imports it before gevent patches anything."""

ANSWER = "ludotheque.answer"
