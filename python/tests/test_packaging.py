"""The package builds with its in-tree backend (standard library only) and works from the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile

from conftest import PYTHON_DIR


def test_the_wheel_holds_the_package_and_the_schema_and_imports(tmp_path):
    sys.path.insert(0, os.path.join(PYTHON_DIR, "build_backend"))
    try:
        import waystation_build
    finally:
        sys.path.pop(0)
    assert waystation_build.get_requires_for_build_wheel() == []
    name = waystation_build.build_wheel(str(tmp_path))
    wheel = tmp_path / name
    names = zipfile.ZipFile(wheel).namelist()
    assert "waystation/__init__.py" in names and "waystation/checkpoint.schema.json" in names
    assert "waystation-0.1.0.dist-info/RECORD" in names and not any("__pycache__" in n for n in names)
    out = subprocess.run(
        [sys.executable, "-c", "import waystation; print(waystation.checkpoint_schema()['title'])"],
        env={**os.environ, "PYTHONPATH": str(wheel)},
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Waystation checkpoint, schema_version 3"


def test_the_sdist_holds_what_a_build_needs(tmp_path):
    import tarfile

    sys.path.insert(0, os.path.join(PYTHON_DIR, "build_backend"))
    try:
        import waystation_build
    finally:
        sys.path.pop(0)
    name = waystation_build.build_sdist(str(tmp_path))
    members = tarfile.open(tmp_path / name).getnames()
    assert "waystation-0.1.0/pyproject.toml" in members and "waystation-0.1.0/waystation/store.py" in members
