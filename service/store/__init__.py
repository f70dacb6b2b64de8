"""Redis (every key and Lua script of the service, in one place) and the SQL
database (the archive: its tables, queries and migrations)."""

import logging

# Alembic says which of its plugins it set up when it is imported, in every
# process (before any module here imports it)
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
