"""The course's submission service (``torchgrader serve``): students submit and see their grade in seconds.

A web process (Starlette on uvicorn) in front of the batch's warm workers: it
stores each upload content-addressed and queues it durably in SQLite before
it answers, and the workers of ``batch/backends/`` grade it. The web process
never imports torch and never runs student code.

- ``config``: the one TOML file (assignments and their policies, workers, limits);
- ``store``: the SQLite store (people, hashed tokens, sessions, submissions, the job queue, results);
- ``blobs``: the content-addressed submission files;
- ``ledger``: the staff's records beside the store (the submissions list, review marks, adjustments, audit);
- ``policy``: deadlines, late days, attempt limits, which attempt counts;
- ``grading``: the grading pool (warm batch workers fed from the queue);
- ``exports``: gradebook.csv and the Canvas and Moodle import files;
- ``roster``: the roster in, the sign-in links out;
- ``web``: one Starlette app (``web.app``) mounting a module per audience: ``web.student`` (pages),
  ``web.staff`` (pages, exports) and ``web.api`` (JSON), over the ``web.site`` they share;
- ``client``: ``torchgrader submit`` and ``submit()`` in a notebook (standard library only);
- ``command``: the ``serve`` and ``submit`` subcommands.

Importing this package imports nothing: ``autograder.submit`` reaches ``client`` only.
"""
