from __future__ import annotations

app_name = "judging"

urlpatterns: list[object] = []
