"""The service's web tier, one module per audience, mounted on one Starlette app (``app.build_app``).

- ``site``: what every audience shares: the ``Service`` (config, store, blobs, pool, sessions, the view of a
  submission, the page renderer) and the guards (limits, refusals, security headers).
- ``student``: the student's pages (home, upload, feedback).
- ``staff``: the staff's pages (dashboard, a student's history, class report, exports, actions).
- ``api``: the JSON API that ``torchgrader submit`` and ``submit()`` call.
"""
