from django.urls import path

from projects import api

urlpatterns = [
    path("projects", api.ProjectListView.as_view(), name="api-projects"),
    # projects/<slug:project> is routed by sessions_app.urls (its view adds DELETE to ProjectDetailView)
    path("projects/<slug:project>/members", api.MemberListView.as_view(), name="api-members"),
    path("projects/<slug:project>/members/<int:member_id>", api.MemberDetailView.as_view(), name="api-member"),
    path("projects/<slug:project>/invitations", api.InvitationListView.as_view(), name="api-invitations"),
    path(
        "projects/<slug:project>/invitations/<int:invitation_id>",
        api.InvitationDetailView.as_view(),
        name="api-invitation",
    ),
    path("auth/device", api.DeviceStartView.as_view(), name="api-device"),
    path("auth/device/token", api.DeviceTokenView.as_view(), name="api-device-token"),
    path("tokens", api.TokenListView.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>", api.TokenDetailView.as_view(), name="api-token"),
]
