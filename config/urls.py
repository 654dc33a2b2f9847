from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView
from rest_framework.permissions import AllowAny

from config.health import healthz
from projects.pages import device_approve

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("device", device_approve, name="device-approve"),
    path("accounts/", include("allauth.urls")),
    path("api/v1/schema", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="api-schema"),
    path("api/v1/", include("projects.urls")),
    path("api/v1/", include("sessions_app.urls")),
    path("", include("frontend.urls")),
]

handler404 = "frontend.views.not_found"
