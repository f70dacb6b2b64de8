"""What the tests share: the API client, live servers, receivers and bots on
loopback, Redis Clusters and Sentinel groups, problem and stream helpers."""
