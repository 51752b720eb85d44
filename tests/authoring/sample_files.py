"""Real reference files, small: the studio parses what it is given, so a test file must be the
kind of file it says it is."""

from __future__ import annotations

import io
import zipfile

from PIL import Image
from pypdf import PdfWriter


def pdf_file() -> bytes:
    """A one-page PDF."""
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    stream = io.BytesIO()
    writer.write(stream)
    return stream.getvalue()


def image_file(kind: str) -> bytes:
    """A 2 x 2 image as PNG or JPEG."""
    stream = io.BytesIO()
    Image.new("RGB", (2, 2), "teal").save(stream, kind)
    return stream.getvalue()


def office_file(part: str, text: str = "<document/>") -> bytes:
    """An Office Open XML document whose main part is `part` (word/document.xml, ...)."""
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr(part, text)
    return stream.getvalue()


PDF = pdf_file()
