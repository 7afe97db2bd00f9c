"""The one family of user-facing errors, and the exit codes of every `aorta` command. Only the
CLI prints these or exits; the library raises them. A `UserError` message is one line that says
what is wrong, where, and what to do instead.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_BROKEN = 1          # the run itself broke (an aorta bug or an unwritable disk)
EXIT_USAGE = 2           # bad usage, bad recipe, a profiler that cannot measure: nothing ran
EXIT_NONE_PASSED = 3     # no trial passed at all, or --strict and some trial did not pass
EXIT_REGRESSION = 4      # compare found a regression beyond the threshold
EXIT_INTERRUPTED = 130   # Ctrl-C (128 + SIGINT); another signal n that stops a run: 128 + n


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


class DiskFullError(UserError):
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
