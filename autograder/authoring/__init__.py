"""Course staff's tools: scaffold, lint, case composition, validate, release, notebook, Gradescope export."""
