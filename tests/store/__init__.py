"""service.store: what Redis costs, refuses and keeps."""
