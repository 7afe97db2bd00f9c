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


def test_interpreter_checks_run_at_once(tmp_path):
    # Two stand-in interpreters that each wait (up to 20 s) for the other to have started:
    # both pass only when the checks overlap; one after the other, the first would fail.
    from aorta.collectors.child_python import check_imports

    pythons = []
    for me, other in (("a", "b"), ("b", "a")):
        script = tmp_path / f"python_{me}"
        script.write_text(f"#!/bin/sh\ntouch '{tmp_path}/{me}.started'\n"
                          f"for i in $(seq 200); do [ -e '{tmp_path}/{other}.started' ] && exit 0;"
                          f" sleep 0.1; done\necho 'never saw {other}' >&2; exit 1\n")
        script.chmod(0o755)
        pythons.append(str(script))
    env = {"PATH": os.environ.get("PATH", "")}
    found = check_imports([(p, "json") for p in pythons], env)
    assert [found[p, "json"].ok for p in pythons] == [True, True], found
    assert check_imports([(sys.executable, "no_such_module_x")], env)[
        sys.executable, "no_such_module_x"].ok is False


def test_an_interpreter_that_writes_without_end_is_stopped(tmp_path):
    from aorta.collectors.child_python import check_imports

    chatty = tmp_path / "python_chatty"
    chatty.write_text("#!/bin/sh\nexec yes >&2\n")
    chatty.chmod(0o755)
    found = check_imports([(str(chatty), "torch")], {"PATH": os.environ.get("PATH", "")})
    assert found[str(chatty), "torch"].ok is None
    assert found[str(chatty), "torch"].problem.endswith("wrote more than 64 MiB; its answer was "
                                                        "not read")
