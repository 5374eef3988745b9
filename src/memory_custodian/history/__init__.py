"""Memory's history from git, read-only: what a revision changes (`diff`), and the history the viewer shows."""
