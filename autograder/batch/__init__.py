"""Batch grading for TAs: expand LMS/nbgrader inputs, grade in parallel on a backend, store, resume."""
