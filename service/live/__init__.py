"""Live play: the push hub, followers (event streams and long polls),
stream tickets, waiting for one's turn."""
