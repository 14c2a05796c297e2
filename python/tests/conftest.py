"""Shared fixtures: the package on the path, an instant offline model, a fresh directory per test."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

# No example database in the checkout: every run draws afresh (a failure prints its example to replay).
settings.register_profile("waystation", database=None)
settings.load_profile("waystation")

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)
REPO = os.path.dirname(PYTHON_DIR)
sys.path.insert(0, PYTHON_DIR)
os.environ["WAYSTATION_OFFLINE_LATENCY_MS"] = "0"
os.environ.pop("OPENAI_API_KEY", None)


@pytest.fixture
def root(tmp_path):
    return str(tmp_path / "checkpoints")


@pytest.fixture
def model():
    from waystation import OfflineModel

    return OfflineModel(latency_ms=0)
