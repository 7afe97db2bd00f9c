"""The child-interpreter import check is cached per whole environment, not per PYTHONPATH."""

from __future__ import annotations

import os
import sys

from aorta.collectors.child_python import check_import


def test_a_variable_other_than_pythonpath_gets_its_own_check(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    assert check_import(sys.executable, "json", env).ok is True
    # PYTHONHOME pointing nowhere: that interpreter cannot even start.
    broken = check_import(sys.executable, "json", {**env, "PYTHONHOME": str(tmp_path / "none")})
    assert broken.ok is False and broken.problem
    assert check_import(sys.executable, "json", env).ok is True
