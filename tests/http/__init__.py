"""service.http: the routes, their contract, caching, limits and errors."""
