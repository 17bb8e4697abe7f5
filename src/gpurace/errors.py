"""The one exception type for problems with the user's input.

Anything the user can get wrong (a file that does not compile, PTX we cannot
parse, a bad launch argument) raises UserError; the CLI prints its message and
exits with status 2, never a traceback. Internal bugs stay ordinary exceptions.
"""


class UserError(Exception):
    """An input the tool cannot handle; the message says what and where."""


class CompileError(UserError):
    """The CUDA compiler rejected the source; the message holds its diagnostics."""


class PtxSyntaxError(UserError):
    """PTX text we cannot parse or do not support; the message names the PTX line."""

    def __init__(self, message: str, line: int, path: str | None = None, text: str | None = None):
        where = f"{path or '<ptx>'}:{line}"
        detail = f"\n    {text.strip()}" if text else ""
        super().__init__(f"{where}: {message}{detail}")
        self.line = line
        self.path = path


class PreconditionViolated(UserError):
    """The launch violates a `__requires(...)` of the kernel; the message names its file:line.

    An input search catches it to discard the candidate input; everywhere
    else it is a UserError like any other bad input.
    """
