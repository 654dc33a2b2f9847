"""SCIM 2.0 for identity providers, mounted at ``/scim/v2/`` (governance/scim.py)."""

from django.urls import path, re_path

from governance import scim

urlpatterns = [
    path("Users", scim.ScimUsersView.as_view(), name="scim-users"),
    path("Users/<str:user_id>", scim.ScimUserView.as_view(), name="scim-user"),
    path("ServiceProviderConfig", scim.ServiceProviderConfigView.as_view(), name="scim-config"),
    re_path(r"", scim.ScimNotFoundView.as_view()),  # last: everything else is a SCIM 404, not the site's
]
