"""allauth's ``openid_connect`` URLs (same names and paths), with ``governance.oidc.callback``."""

from allauth.socialaccount import app_settings
from allauth.socialaccount.providers.openid_connect import views
from django.urls import include, path, re_path

from governance import oidc

urlpatterns = [
    re_path(
        r"^(?P<provider_id>[^/]+)/",
        include(
            [
                path("login/", views.login, name="openid_connect_login"),
                path("login/callback/", oidc.callback, name="openid_connect_callback"),
            ]
        ),
    )
]

if app_settings.OPENID_CONNECT_URL_PREFIX:
    urlpatterns = [path(f"{app_settings.OPENID_CONNECT_URL_PREFIX}/", include(urlpatterns))]
