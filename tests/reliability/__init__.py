"""Evidence that Ludothèque holds when its store does not: concurrency, Redis
outages, clusters, replication and failover."""
