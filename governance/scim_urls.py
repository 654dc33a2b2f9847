"""SCIM 2.0 for identity providers, mounted at ``/scim/v2/`` (governance/scim/)."""

from django.urls import path, re_path

from governance.scim import discovery, groups, protocol, users

urlpatterns = [
    path("Users", users.ScimUsersView.as_view(), name="scim-users"),
    path("Users/<str:user_id>", users.ScimUserView.as_view(), name="scim-user"),
    path("Groups", groups.ScimGroupsView.as_view(), name="scim-groups"),
    path("Groups/<str:group_id>", groups.ScimGroupView.as_view(), name="scim-group"),
    path("ServiceProviderConfig", discovery.ServiceProviderConfigView.as_view(), name="scim-config"),
    path(".search", discovery.SearchView.as_view(), name="scim-search"),
    path("Schemas", discovery.SchemasView.as_view(), name="scim-schemas"),
    path("Schemas/<str:schema_id>", discovery.SchemaView.as_view(), name="scim-schema"),
    path("ResourceTypes", discovery.ResourceTypesView.as_view(), name="scim-resource-types"),
    path("ResourceTypes/<str:type_id>", discovery.ResourceTypeView.as_view(), name="scim-resource-type"),
    re_path(r"", protocol.ScimNotFoundView.as_view()),  # last: everything else is a SCIM 404, not the site's
]
