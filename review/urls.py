from __future__ import annotations

from django.urls import path

from review import views

app_name = "review"

urlpatterns: list[object] = [
    path("p/<slug:slug>/adjudication/", views.adjudication_queue, name="adjudication_queue"),
    path(
        "p/<slug:slug>/adjudication/<int:record_id>/",
        views.adjudication_record,
        name="adjudication_record",
    ),
]
