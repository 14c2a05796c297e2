"""Folders a start's options name, kept inside the checkpoint directory when the inspector started the task."""

from __future__ import annotations

import os

import pytest

from waystation import PathOutsideRoot, WaystationError, resolve_inside_root


@pytest.fixture
def place(tmp_path):
    root = tmp_path / "root"
    (root / "notes" / "deep").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "link-out")
    os.symlink(root / "notes", root / "link-in")
    return str(root), str(outside)


def test_a_folder_inside_named_relative_or_absolute_resolves_to_its_real_path(place):
    root, _ = place
    real = os.path.realpath(root)
    assert resolve_inside_root(root, "notes") == os.path.join(real, "notes")
    assert resolve_inside_root(root, "./notes/deep/") == os.path.join(real, "notes", "deep")
    assert resolve_inside_root(root, os.path.join(root, "notes")) == os.path.join(real, "notes")
    # A link that stays inside is followed; a folder not there yet is named as it will be.
    assert resolve_inside_root(root, "link-in/deep") == os.path.join(real, "notes", "deep")
    assert resolve_inside_root(root, "outputs/t1") == os.path.join(real, "outputs", "t1")


@pytest.mark.parametrize(
    "requested, why",
    [
        ("../outside", 'it climbs out with ".."'),
        ("notes/../../outside", 'it climbs out with ".."'),
        ("link-out", "it leads outside through a symbolic link"),
        ("link-out/new-folder", "it leads outside through a symbolic link"),
        ("notes\0x", "it contains a NUL byte"),
    ],
)
def test_a_way_out_is_refused_with_the_reason(place, requested, why):
    root, _ = place
    with pytest.raises(PathOutsideRoot) as err:
        resolve_inside_root(root, requested)
    assert err.value.why == why
    assert root in str(err.value)


def test_an_absolute_path_elsewhere_is_refused(place):
    root, outside = place
    with pytest.raises(PathOutsideRoot, match="it names a folder outside the directory"):
        resolve_inside_root(root, outside)
    with pytest.raises(PathOutsideRoot, match="it names a folder outside the directory"):
        resolve_inside_root(root, "/")


def test_a_refusal_is_a_waystation_error_and_still_a_value_error(place):
    root, outside = place
    with pytest.raises(WaystationError) as err:
        resolve_inside_root(root, outside)
    assert isinstance(err.value, PathOutsideRoot) and isinstance(err.value, ValueError)
