"""The HTTP layer: routes (one module per resource, so that a URL leads
to one file), the contract's schemas, and the middleware around them."""
