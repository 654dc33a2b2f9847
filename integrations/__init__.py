"""Forges: GitHub (as a GitHub App) and GitLab, above the product core (docs/forges.md).

Webhooks are verified and de-duplicated here (``webhooks``), parsed by a forge's adapter
(``forges``) into typed events, and applied to the repositories a staff member bound to a project
(``services``): pull requests and their commits, fetched from the forge's API (``forges.http``).
It may use ``sessions_app`` and ``projects``; neither imports it.
"""
