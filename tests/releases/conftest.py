from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path: Path) -> None:
    # Releases write their files: keep them out of the development media folder.
    settings.MEDIA_ROOT = tmp_path / "media"
