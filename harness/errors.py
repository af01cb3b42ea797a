"""User-facing errors: one line naming the file, the field or line, and the fix. Exit code 2."""

from __future__ import annotations

from dataclasses import dataclass

USER_ERROR_EXIT = 2


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input the user wrote."""

    file: str
    where: str
    message: str
    fix: str

    def line(self) -> str:
        return f"{self.file}: {self.where}: {self.message}; fix: {self.fix}"


class UserError(Exception):
    """Bad input. The CLI prints each problem's line and exits with code 2, no traceback."""

    def __init__(self, problems: Problem | list[Problem]):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(p.line() for p in self.problems))


def user_error(file: str, where: str, message: str, fix: str) -> UserError:
    return UserError(Problem(file, where, message, fix))
