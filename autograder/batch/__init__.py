"""Batch grading for TAs: expand LMS/nbgrader inputs, grade in parallel on a backend, store, resume."""

# The grader image a container backend runs (built as docker/README.md says): `grade --docker-image`, the
# service's `docker_image` and the container backends default to it. Here, so that image_digest (which the
# docker backend imports) can read it too.
DEFAULT_IMAGE = "torchgrader:cpu"
