"""The account web: sign-in, sessions, API key pages, usage, the IOC dashboard and the API docs
viewer, served by the same Tornado application as the API on the server's plumbing. The API itself stays
key-only: nothing here authenticates /api/v1 or TAXII requests."""
