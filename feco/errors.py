"""One error family for everything feco reports to a user.

Usage errors (bad config, bad arguments) are told apart from data errors (bad logs, schema
mismatch, a missing partition) so the CLI can exit with distinct codes and a scheduler can
tell "fix the command" from "look at the data".
"""


class FecoError(Exception):
    """Base of every error feco raises on purpose; the CLI prints it as one line."""

    exit_code = 1


class UsageError(FecoError):
    """The caller asked for something impossible: a bad config, argument or option."""

    exit_code = 2


class ConfigError(UsageError):
    """A config file is missing, malformed, or has an unknown key or a wrong type."""


class DataError(FecoError):
    """The data is not what feco needs: a missing partition, a corrupt file, a bad column."""


class WarehouseBusyError(FecoError):
    """Another process holds the warehouse for writing."""

    exit_code = 3


class QueryTimeoutError(UsageError):
    """A read-only query ran longer than its time limit and was cancelled."""
