"""Old import paths that bench/ still uses; the helpers live in tests.support.
Remove this package once bench/ imports from tests.support."""
