from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from curation.views import accounts, core

# (the app a model left, the app it is in now): the models that moved.
MOVED_MODELS = {
    ("curation", "annotation"): ("guidelineversion", "lease", "annotation"),
    ("curation", "authoring"): (
        "riskcategory",
        "rubriccheck",
        "task",
        "referencefile",
        "taskrevision",
        "review",
    ),
    ("judging", "review"): ("disagreement", "adjudication", "pendingcheck"),
}

urlpatterns = [
    path("", core.home, name="home"),
    path("healthz/", core.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", accounts.account, name="account"),
    path("account/tokens/revoke/", accounts.api_token_revoke_view, name="api_token_revoke"),
    path("invitations/<str:token>/", accounts.invitation_accept_view, name="invitation_accept"),
    path("account/password/", accounts.PasswordChange.as_view(), name="password_change"),
    # The admin's pages of the models that left an app for another keep their old addresses.
    *(
        re_path(
            rf"^admin/{old}/(?P<model>{'|'.join(models)})/(?P<rest>.*)$",
            RedirectView.as_view(url=f"/admin/{new}/%(model)s/%(rest)s", query_string=True),
        )
        for (old, new), models in MOVED_MODELS.items()
    ),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # A page for people: send anonymous visitors to the login page rather than answer 403.
    path(
        "api/docs/",
        # The split view serves its init script as a file; our template also moves the page's
        # inline style to a file, so the docs work under the strict CSP.
        login_required(
            SpectacularSwaggerSplitView.as_view(
                url_name="api-schema", template_name="api/docs.html"
            )
        ),
        name="api-docs",
    ),
    path("api/", include("curation.api_urls")),
    path("api/", include("annotation.api_urls")),
    path("api/", include("authoring.api_urls")),
    path("api/", include("judging.api_urls")),
    path("api/", include("review.api_urls")),
    path("api/", include("reports.api_urls")),
    path("api/", include("alignment.api_urls")),
    path("api/", include("hub.api_urls")),
    path("api/", include("releases.api_urls")),
    path("", include("curation.urls")),
    path("", include("annotation.urls")),
    path("", include("authoring.urls")),
    path("", include("judging.urls")),
    path("", include("review.urls")),
    path("", include("reports.urls")),
    path("", include("alignment.urls")),
    path("", include("hub.urls")),
    path("", include("releases.urls")),
]
