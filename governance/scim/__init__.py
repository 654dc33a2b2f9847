"""SCIM 2.0 (RFC 7643/7644) at ``/scim/v2/``, so an identity provider (Okta, Entra ID) provisions and
deprovisions people and pushes groups (docs/identity.md).

A small DRF view set rather than django-scim2: that library wants its own app, middleware and
settings block, and authenticates through a Django user, while here the caller is the identity
provider holding a bearer token (``SESSIONLEDGER_SCIM_TOKEN`` or one of the hashed ``ScimToken`` rows,
``governance.scim_tokens``). The parts: ``protocol`` (parsers, errors, the base view, paging and
``attributes``), ``filters`` (the ``eq``/``and`` filters the providers send), ``patch`` (PatchOp in
every form they send), ``users``, ``groups`` (memberships follow through ``governance.groups``) and
``discovery`` (``/ServiceProviderConfig``, ``/Schemas``, ``/ResourceTypes``).
"""
