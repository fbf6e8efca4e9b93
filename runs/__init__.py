"""Runs as an app: the runs REST API, the services that start, cancel and decide runs (called
by the API, the CLI and the designer), and the designer's test-run worker processes."""
