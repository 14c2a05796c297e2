"""A PEP 517 build backend for the waystation package, in the standard library alone.

The package is pure Python with no dependencies, so its wheel is a zip of
`waystation/` and the metadata: building it needs neither setuptools nor
wheel, and `pip install ./python` works offline, with or without build
isolation, on any Python 3.10+.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import zipfile

NAME = "waystation"
VERSION = "0.1.0"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "py3-none-any"


def _metadata() -> str:
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {VERSION}\n"
        "Summary: Durable, resumable AI-agent tasks in the Waystation checkpoint format\n"
        "License: MIT\n"
        "Requires-Python: >=3.10\n"
        "Provides-Extra: openai\n"
        'Requires-Dist: openai>=1.0; extra == "openai"\n'
        "Description-Content-Type: text/markdown\n\n" + readme
    )


def _package_files() -> list[tuple[str, str]]:
    out = []
    for folder, dirs, names in os.walk(os.path.join(HERE, NAME)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".json", ".typed")):
                path = os.path.join(folder, name)
                out.append((path, os.path.relpath(path, HERE).replace(os.sep, "/")))
    return out


def _record_line(arcname: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):  # noqa: ANN001, D103 - PEP 517 hook
    return []


def get_requires_for_build_sdist(config_settings=None):  # noqa: ANN001, D103 - PEP 517 hook
    return []


def get_requires_for_build_editable(config_settings=None):  # noqa: ANN001, D103 - PEP 517 hook
    return []


def _dist_info(folder: str) -> str:
    info = os.path.join(folder, f"{NAME}-{VERSION}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return os.path.basename(info)


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):  # noqa: ANN001, D103
    return _dist_info(metadata_directory)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def _wheel(wheel_directory: str, files: list[tuple[str, bytes]]) -> str:
    name = f"{NAME}-{VERSION}-{TAG}.whl"
    info = f"{NAME}-{VERSION}.dist-info"
    files = files + [
        (f"{info}/METADATA", _metadata().encode("utf-8")),
        (f"{info}/WHEEL", f"Wheel-Version: 1.0\nGenerator: waystation_build\nRoot-Is-Purelib: true\nTag: {TAG}\n".encode()),
    ]
    record = "\n".join([_record_line(a, d) for a, d in files] + [f"{info}/RECORD,,", ""])
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files + [(f"{info}/RECORD", record.encode())]:
            z.writestr(zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, D103
    files = []
    for path, arcname in _package_files():
        with open(path, "rb") as f:
            files.append((arcname, f.read()))
    return _wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):  # noqa: ANN001, D103
    # A .pth file that puts this folder on the path: edits to the package take effect without reinstalling.
    return _wheel(wheel_directory, [(f"{NAME}-editable.pth", (HERE + "\n").encode())])


def build_sdist(sdist_directory, config_settings=None):  # noqa: ANN001, D103
    base = f"{NAME}-{VERSION}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "build_backend/waystation_build.py"]:
            tar.add(os.path.join(HERE, rel), f"{base}/{rel}")
        for path, arcname in _package_files():
            tar.add(path, f"{base}/{arcname}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode("utf-8")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
