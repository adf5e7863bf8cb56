"""Twin of id_escaped_id_periods_unescaped.mjs: the machine of id_escaped_id_periods, other events."""

import importlib.util
from pathlib import Path
from typing import Any


def build() -> Any:
    path = Path(__file__).with_name("id_escaped_id_periods.py")
    spec = importlib.util.spec_from_file_location("_id_escaped_id_periods_machine", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build()
