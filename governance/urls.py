"""The governance API under ``/api/v1/``: the audit trail, and staff's offboarding and erasure."""

from django.urls import path

from governance.api import audit, staff, stream

urlpatterns = [
    path("projects/<slug:project>/audit", audit.ProjectAuditView.as_view(), name="api-project-audit"),
    path("audit", audit.AuditView.as_view(), name="api-audit"),
    path("audit/stream", stream.AuditStreamView.as_view(), name="api-audit-stream"),
    path("users/<int:user_id>/deactivate", staff.UserDeactivateView.as_view(), name="api-user-deactivate"),
    path("users/<int:user_id>/erase", staff.UserEraseView.as_view(), name="api-user-erase"),
    path("group-mappings", staff.GroupMappingsView.as_view(), name="api-group-mappings"),
    path("group-mappings/<int:mapping_id>", staff.GroupMappingView.as_view(), name="api-group-mapping"),
    path("users/<int:user_id>/export", staff.UserExportView.as_view(), name="api-user-export"),
]
