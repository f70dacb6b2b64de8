"""service.server and the CLI: gunicorn's configuration, the wire, the
collector, `ludotheque serve` and `ludotheque bot`."""
