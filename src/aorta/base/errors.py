"""The one family of user-facing errors, and the exit codes of every `aorta` command. Only the
CLI prints these or exits; the library raises them. A `UserError` message is one line that says
what is wrong, where, and what to do instead.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

EXIT_OK = 0              # what each code means: EXIT_MEANINGS
EXIT_BROKEN = 1
EXIT_USAGE = 2
EXIT_NONE_PASSED = 3
EXIT_REGRESSION = 4
EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT); another signal n that stops a run: 128 + n

# What each code means, in the words of every help text (`exit_codes_text`) and the README.
EXIT_MEANINGS = {
    "0": "done (a failing trial is data, not an error)",
    "1": "aorta itself broke (a bug: please report it)",
    "2": "bad usage or input, nothing run: a flag, a recipe, a run directory or history "
         "database that is missing, locked or unusable, a collector that cannot measure here; "
         "or a path aorta cannot write (read-only, not permitted, a full disk: the run is "
         "marked interrupted, finished trials are kept, the same command resumes)",
    "3": "no trial passed (every trial failed or errored: nothing was measured); or --strict "
         "and some trial did not pass",
    "4": "--fail-on found a regression (compare, history show, history report)",
    "128 + n": "interrupted by signal n (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); a sweep marks "
               "its run interrupted and the same command resumes it",
}


def exit_codes_text(*specific: str) -> str:
    """A help text's `Exit codes:`, one a line: those of every command, and `specific` ("3",
    "4"). Click keeps a paragraph that starts with \\b as it is."""
    import textwrap

    return "\b\nExit codes:\n" + "\n".join(
        textwrap.fill(why, 76, initial_indent=f"  {code:<8}", subsequent_indent=" " * 10)
        for code, why in EXIT_MEANINGS.items() if code not in ("3", "4") or code in specific)


class UserError(Exception):
    """An error the user can fix; the CLI prints it on one line and exits with `exit_code`."""

    exit_code = EXIT_USAGE


class Interrupted(KeyboardInterrupt):
    """A signal other than Ctrl-C stopped a run and took Ctrl-C's path (aorta.run.signals):
    what finished is kept, the run is marked interrupted; the exit code is 128 + `signum`."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class WardenLost(UserError):
    """The trial warden died mid-sweep (killed on its own): the sweep stops, marked interrupted."""

    exit_code = EXIT_BROKEN


class RecipeError(UserError):
    """The recipe file is unreadable or breaks the schema."""


class OptionError(UserError):
    """A collector's options are invalid."""


class ConflictError(UserError):
    """Two requested collectors cannot run in one trial."""


class SetupError(UserError):
    """A collector cannot attach to this command or this machine. Inside a sweep it turns the
    trial into an `error`; the payload is never run unprofiled."""


class RunDirError(UserError):
    """The run directory is locked, or holds a different run."""


class FilesystemError(UserError):
    """The filesystem refused what aorta had to do there: full, read-only, not permitted, a
    path through a regular file... (`doing`). Nothing already written is lost: every file is
    replaced atomically, so a failed write leaves the old one whole."""


class DiskFullError(FilesystemError):
    """The disk filled up (or failed) while a trial ran or the run wrote its records: the run
    is marked interrupted, what finished is kept (the trial it hit is not recorded), and the
    same command resumes once there is space."""

    FULL = ("no space left on device", "disk quota exceeded")   # ENOSPC, EDQUOT in words

    @classmethod
    def at(cls, where: str, cause: str = FULL[0]) -> DiskFullError:
        """`cause` in the system's words (strerror, lower case), `where` the path or trial."""
        fix = "free some space" if cause in cls.FULL else "make the disk writable again"
        return cls(f"{cause} {where}: what finished is kept; {fix}, then rerun the same "
                   f"command to resume")


_FREE = "free space on that filesystem or choose another {option}"
# errno -> (the cause in words, the fix); errors not listed here are aorta's own bugs
_CAUSES = {
    errno.ENOSPC: ("no space left on the device", _FREE),
    errno.EDQUOT: ("the disk quota is used up", _FREE),
    errno.EFBIG: ("the file is larger than that filesystem allows",
                  "choose another {option} on another filesystem"),
    errno.EROFS: ("the filesystem is read-only", "choose a writable {option}"),
    errno.EACCES: ("permission denied", "grant access to it or choose another {option}"),
    errno.EPERM: ("the operation is not permitted there", "choose another {option}"),
    errno.ENOTDIR: ("a part of the path is a regular file, not a directory",
                    "remove or rename that file, or choose another {option}"),
    errno.EEXIST: ("it exists and is not a directory",
                   "remove or rename it, or choose another {option}"),
    errno.EISDIR: ("it is a directory where aorta writes a file",
                   "remove or rename that directory, or choose another {option}"),
    errno.ENAMETOOLONG: ("the name is too long for the filesystem", "choose a shorter {option}"),
    errno.ELOOP: ("too many levels of symbolic links", "choose another {option}"),
    errno.EMLINK: ("its directory holds too many entries", "choose another {option}"),
    errno.EIO: ("the device reported an input/output error",
                "check the disk (dmesg) or choose another {option}"),
    errno.ESTALE: ("the network filesystem lost the file (stale handle)",
                   "check the mount or choose another {option}"),
}


def filesystem_error(exc: OSError, what: str, option: str = "path") -> FilesystemError | None:
    """`exc` as one line, `<what> <path>: <cause>; <fix>` naming `option` as the way out, when
    the environment caused it; None for any other error (an aorta bug)."""
    if exc.errno not in _CAUSES:
        return None
    cause, fix = _CAUSES[exc.errno]
    kind = DiskFullError if exc.errno in (errno.ENOSPC, errno.EDQUOT) else FilesystemError
    where = "" if exc.filename is None else f" {exc.filename}"
    return kind(f"{what}{where}: {cause}; {fix.format(option=option)}")


@contextmanager
def doing(what: str, option: str = "path") -> Iterator[None]:
    """Turn an environment OSError raised in the block into a `FilesystemError` that says what
    aorta was doing (`what`, e.g. "writing the report") and which option avoids it."""
    try:
        yield
    except OSError as exc:
        error = filesystem_error(exc, what, option)
        if error is None:
            raise
        raise error from exc
