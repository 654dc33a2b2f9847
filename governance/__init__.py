"""Identity and governance, above the product core (docs/design.md "The layers").

Who may come in and what a company may demand of the data: single sign-on's policies and allauth's
hooks (``sso``, ``oidc``, ``adapters``, ``reclaim``, ``browser_sessions``), SCIM provisioning
(``scim/``; groups → project roles in ``groups``, rotating tokens in ``scim_tokens``), offboarding and
erasing a person (``offboarding``, ``erasure``), a person's export for an access request
(``person_export``), reading and exporting the audit trail (``audit``,
``api``), sign-in and privilege events (``auth_events``), a project's audit retention and legal hold
(``holds``, ``retention``), the trail's integrity and its copy off the box (``dbroles``, ``integrity``,
``streaming``); its tables are in ``models``. It may use ``sessions_app`` (share links, sessions and
their blobs are ended or erased here) and ``projects``; neither imports it. Events are still written
by ``projects.audit_trail.record`` where they happen, in every layer.
"""
