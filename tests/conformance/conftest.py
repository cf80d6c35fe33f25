"""Set-up of the ONNX conformance tests: the regenerated node test data and the ``zoo`` marker.

The node test data is generated once per onnx version into the cache
(``$RAMIEL_ONNX_TEST_DATA`` or ``~/.cache/ramiel/onnx-backend-data``; about 10 s) when the test
module is collected; see :mod:`ramiel.tools.conformance`.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "zoo: an ONNX zoo model test (light_*; ~30 s together); deselect with -m 'not zoo'",
    )
