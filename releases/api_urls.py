from __future__ import annotations

from django.urls import path

from releases import api

app_name = "releases_api"

RELEASE = "projects/<slug:slug>/releases/<int:release_id>"

urlpatterns: list[object] = [
    path("projects/<slug:slug>/releases/", api.ReleaseList.as_view(), name="release_list"),
    path(
        "projects/<slug:slug>/releases/preview/",
        api.ReleasePreview.as_view(),
        name="release_preview",
    ),
    path(f"{RELEASE}/", api.ReleaseDetail.as_view(), name="release_detail"),
    path(f"{RELEASE}/files/<str:name>", api.ReleaseFile.as_view(), name="release_file"),
]
