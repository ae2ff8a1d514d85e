"""The one exception tree of evalrun, and the exit code of each branch.

    EvalrunError                 exit 1   base; never raised bare
    ├── UsageError               exit 2   bad flags or arguments
    ├── ConfigError              exit 2   bad contract, policy or results dir
    ├── SuiteError               exit 2   unknown, malformed or modified suite
    ├── RunNotFound              exit 2   a run id that is not in the store
    ├── EndpointError            exit 3   unreachable or not OpenAI-compatible
    ├── BootError                exit 3   the server under test failed to boot
    ├── LaneError                exit 3   a lane cannot be set up on this machine
    └── Interrupted              exit 130 Ctrl-C or SIGTERM; results are flushed

Every message is one line that says what to do next.
"""

from __future__ import annotations


class EvalrunError(Exception):
    """Base of every error evalrun reports to a user."""

    exit_code = 1
    # The stored run an error stopped (a score that stopped early): `--json` and `--junit` still
    # report it, and bisect links a trial's probe run.
    run_id: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UsageError(EvalrunError):
    """The command line does not make sense."""

    exit_code = 2


class ConfigError(EvalrunError):
    """A contract, policy, or results directory cannot be used."""

    exit_code = 2


class SuiteError(EvalrunError):
    """A suite is unknown, malformed, or does not match its manifest."""

    exit_code = 2


class RunNotFound(EvalrunError):
    """A run id (or tag) that the results store does not hold."""

    exit_code = 2


class EndpointError(EvalrunError):
    """The endpoint is unreachable or does not speak the OpenAI API."""

    exit_code = 3


class BootError(EvalrunError):
    """The server under test did not come up; `kind` classifies why."""

    exit_code = 3

    def __init__(
        self, message: str, *, kind: str = "unknown", hint: str | None = None, log_tail: str = ""
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.log_tail = log_tail


class LaneError(EvalrunError):
    """A lane (a real engine installed by `evalrun lane setup`) cannot be set up here."""

    exit_code = 3


class Interrupted(EvalrunError):
    """The user pressed Ctrl-C or the process got SIGTERM."""

    exit_code = 130
