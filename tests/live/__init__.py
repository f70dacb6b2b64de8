"""service.live: the push hub, followers, streams, long polls and tickets."""
