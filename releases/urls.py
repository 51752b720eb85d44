from __future__ import annotations

from django.urls import path

from releases import views

app_name = "releases"

RELEASE = "p/<slug:slug>/releases/<int:release_id>"

urlpatterns: list[object] = [
    path("p/<slug:slug>/releases/", views.release_list, name="release_list"),
    path("p/<slug:slug>/releases/new/", views.release_new, name="release_new"),
    path(f"{RELEASE}/", views.release_detail, name="release_detail"),
    path(f"{RELEASE}/changes/", views.release_changes_page, name="release_changes"),
    path(f"{RELEASE}/files/<str:name>", views.release_file, name="release_file"),
    path(f"{RELEASE}/check/", views.release_check_files, name="release_check"),
    path(f"{RELEASE}/visibility/", views.release_visibility, name="release_visibility"),
    path(f"{RELEASE}/rebuild/", views.release_rebuild, name="release_rebuild"),
    path(f"{RELEASE}/delete/", views.release_remove, name="release_delete"),
]
