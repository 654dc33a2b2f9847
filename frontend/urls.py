from django.urls import path

from frontend import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("invitations/<str:token>/", views.invitation_accept, name="invitation-accept"),
    path("p/<slug:project>/", views.ProjectHomeView.as_view(), name="project-home"),
]
