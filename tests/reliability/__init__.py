"""Evidence that Ludothèque holds: contract fuzzing, concurrency, hostile input, secrets."""
