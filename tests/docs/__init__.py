"""What the README and the docs say, run as written."""
