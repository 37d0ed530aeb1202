"""Authentication: bearer tokens, the login endpoints and the route dependencies."""
