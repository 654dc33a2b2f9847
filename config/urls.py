from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.permissions import AllowAny

from config.client_wheel import client_wheel
from config.health import healthz, livez, readyz
from config.metrics import metrics_view

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("livez", livez, name="livez"),
    path("readyz", readyz, name="readyz"),
    path("client/<str:filename>", client_wheel, name="client-wheel"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("api/v1/schema", SpectacularAPIView.as_view(permission_classes=[AllowAny]), name="api-schema"),
    path(
        "api/v1/docs",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", permission_classes=[AllowAny], template_name="api_docs/swagger_ui.html"
        ),
        name="api-docs",
    ),
    path("scim/v2/", include("governance.scim_urls")),
    path("api/v1/", include("projects.urls")),
    path("api/v1/", include("sessions_app.urls")),
    path("api/v1/", include("governance.urls")),
    path("api/v1/", include("integrations.api_urls")),
    path("integrations/", include("integrations.urls")),
    path("", include("frontend.urls")),
]

handler404 = "frontend.views.not_found"
