"""`serve`: a local, read-only web view of the context pack, the ledger and each note's history.

An adapter like the CLI and the MCP server: it calls `Memory` and its result records and draws
them as HTML, with every memory text escaped as data. The standard library's HTTP server carries
it (no framework, no script, nothing fetched from elsewhere), bound to loopback by default.
"""
