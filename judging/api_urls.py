from __future__ import annotations

app_name = "judging_api"

urlpatterns: list[object] = []
