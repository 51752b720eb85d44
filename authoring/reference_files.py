"""Reference files of tasks: which files are accepted, under which name, served as what.

Uploads are hostile: a name may hold a path or control characters, and an extension may lie
about the content. A file is accepted only if its extension is allowed (TASK_FILE_TYPES) and it
parses as that type (a PDF reader reads its pages, an image library its image, a zip reader the
Office document's parts): a first line of `%PDF-` before an HTML page is not a PDF. It is always
served as an attachment, with a content type that no browser renders as a page.
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import PurePath
from xml.parsers import expat

from django.conf import settings

from curation.errors import DomainError

NAME_MAX_CHARS = 120
_UNSAFE = re.compile(r"[^\w.\- ()]+")


def _is_text(data: bytes) -> bool:
    if b"\x00" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_json(data: bytes) -> bool:
    if not _is_text(data):
        return False
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def _is_office(part: str) -> Callable[[bytes], bool]:
    """An Office Open XML document: a zip whose content types and main `part` are XML."""

    def check(data: bytes) -> bool:
        if not data.startswith(b"PK\x03\x04"):
            return False
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                return all(_is_xml(archive, name) for name in ("[Content_Types].xml", part))
        except (zipfile.BadZipFile, ValueError, KeyError, OSError, EOFError):
            return False

    return check


def _is_xml(archive: zipfile.ZipFile, name: str) -> bool:
    # Parsed without expanding entities or fetching anything: a part may be hostile too.
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse_entities
    with archive.open(name) as stream:
        try:
            parser.ParseFile(stream)
        except expat.ExpatError:
            return False
    return True


def _refuse_entities(*args: object) -> None:
    raise expat.ExpatError("entity declarations are not accepted")


def _is_pdf(data: bytes) -> bool:
    if not data.startswith(b"%PDF-"):
        return False
    # Imported here: the PDF reader is needed only when a file is checked.
    from pypdf import PdfReader

    try:
        return len(PdfReader(io.BytesIO(data), strict=False).pages) > 0
    except Exception:  # a hostile file may break the reader in any way
        return False


def _is_image(kind: str) -> Callable[[bytes], bool]:
    """An image the image library reads as `kind` (PNG, JPEG) from end to end."""

    def check(data: bytes) -> bool:
        # Imported here: the image library is needed only when a file is checked.
        from PIL import Image

        try:
            with Image.open(io.BytesIO(data), formats=[kind]) as image:
                image.verify()
        except Exception:  # a hostile file may break the reader in any way
            return False
        return True

    return check


# Extension -> (how its content is recognised, the content type it is served with). Text is
# served as plain text whatever its kind, so that no HTML or script in it is ever interpreted.
FILE_TYPES: dict[str, tuple[Callable[[bytes], bool], str]] = {
    "pdf": (_is_pdf, "application/pdf"),
    "png": (_is_image("PNG"), "image/png"),
    "jpg": (_is_image("JPEG"), "image/jpeg"),
    "jpeg": (_is_image("JPEG"), "image/jpeg"),
    "txt": (_is_text, "text/plain; charset=utf-8"),
    "md": (_is_text, "text/plain; charset=utf-8"),
    "csv": (_is_text, "text/plain; charset=utf-8"),
    "json": (_is_json, "application/json"),
    "docx": (
        _is_office("word/document.xml"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ),
    "xlsx": (
        _is_office("xl/workbook.xml"),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ),
}


def safe_file_name(name: str) -> str:
    """`name` as a plain file name: no folders, no control or shell characters, not too long."""
    base = PurePath(name.replace("\\", "/")).name
    base = unicodedata.normalize("NFC", base).strip()
    base = _UNSAFE.sub("_", base).strip(" .")
    stem, dot, extension = base.rpartition(".")
    if not dot:
        stem, extension = base, ""
    stem = stem[: NAME_MAX_CHARS - len(extension) - 1] or "file"
    return f"{stem}.{extension.lower()}" if extension else stem


def allowed_types() -> list[str]:
    return list(settings.TASK_FILE_TYPES)


def check_reference_file(name: str, data: bytes) -> str:
    """The content type to serve a file with, if it may be attached; DomainError if not."""
    extension = name.rpartition(".")[2].lower() if "." in name else ""
    if extension not in settings.TASK_FILE_TYPES:
        raise DomainError(
            f"“{name}” is not an accepted kind of file: attach {', '.join(allowed_types())}."
        )
    if len(data) > settings.TASK_FILE_MAX_BYTES:
        raise DomainError(
            f"“{name}” is larger than the limit of {settings.TASK_FILE_MAX_BYTES:,} bytes."
        )
    looks_right, content_type = FILE_TYPES[extension]
    if not looks_right(data):
        raise DomainError(f"“{name}” does not hold what a .{extension} file holds.")
    return content_type


def served_content_type(name: str) -> str:
    """The content type a stored file is served with (stored files passed the checks)."""
    extension = name.rpartition(".")[2].lower()
    return FILE_TYPES.get(extension, (None, "application/octet-stream"))[1]
