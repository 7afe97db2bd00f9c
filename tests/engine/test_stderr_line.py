"""The last meaningful stderr line that a failing trial's reason quotes."""

from __future__ import annotations

import textwrap

from aorta.run.stderr_line import MAX_LINE_CHARS, last_meaningful_line

TRACEBACK = textwrap.dedent("""\
    Traceback (most recent call last):
      File "train.py", line 3, in <module>
        main()
    RuntimeError: CUDA error: out of memory

    """)


def test_the_exception_line_of_a_traceback():
    assert last_meaningful_line(TRACEBACK) == "RuntimeError: CUDA error: out of memory"


def test_progress_noise_after_the_error_is_skipped():
    noise = (" 45%|####      | 9/20 [00:01<00:02, 3.2it/s]\r"
             "100%|##########| 20/20 [00:02<00:00, 9.1it/s]\n"
             "==========\n"
             "12/50\n"
             "Loading weights: 80%\n"
             "I1204 01:07:08.123 12 SyncActivityProfilerHandler.cpp:59] profiler_stop\n\n")
    assert last_meaningful_line(TRACEBACK + noise) == "RuntimeError: CUDA error: out of memory"


def test_control_characters_are_escaped_and_colours_dropped():
    line = last_meaningful_line("\x1b[31mError:\x1b[0m bad\tvalue \x07 \x00\n")
    assert line == "Error: bad value \\x07 \\x00"


def test_length_is_bounded():
    line = last_meaningful_line("E" * 1000)
    assert line is not None and len(line) == MAX_LINE_CHARS and line.endswith("...")


def test_nothing_meaningful_gives_none():
    assert last_meaningful_line("") is None
    assert last_meaningful_line(None) is None
    assert last_meaningful_line("\n  \n100%|####| 3/3\n") is None
