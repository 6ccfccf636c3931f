"""LTI 1.3 Advantage: the course's LMS launches students and staff into the service and takes their scores back.

One module per job:

- ``config``: the platforms the course trusts (``[[lti.platforms]]`` in the service's TOML, or registered
  dynamically), and the LTI settings;
- ``keys``: the tool's own signing key (made at first start in the data folder, published as a JWKS,
  rotatable);
- ``tables``: the LTI tables in the service's SQLite store (logins, nonces, users, contexts, members, line
  items, the score outbox), created by migrations an existing data folder survives;
- ``verify``: the OpenID Connect third-party login and the ``id_token``'s verification (platform JWKS fetched,
  cached and re-read on an unknown ``kid``);
- ``platform``: the tool's calls to the platform (OAuth 2 client credentials, NRPS, AGS line items and scores);
- ``outbox``: each change of a counting score, posted to the LMS once, retried with backoff, surviving a
  restart;
- ``registration``: LTI Dynamic Registration and Canvas's JSON configuration;
- ``routes``: the Starlette routes and pages, mounted beside the student's and staff's.

JOSE/JWT is joserfc's (signatures, key sets, claims); the LTI message handling is ours, written to the
Starlette app's sessions and view-model (see ``routes``).
"""
