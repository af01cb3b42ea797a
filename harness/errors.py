"""Every exception the harness raises, under one root, `HarnessError`.

`UserError` is bad input: the CLI prints each `Problem` as one line naming the file, the
field or line, and the fix, and exits 2 with no traceback. Every other class is internal:
a caller catches it and either turns it into a `UserError` or records it (a pair's cause).
Each class is defined beside the code that raises it (a predicate error's `reason` is part
of the checker's verdicts, so it stays in the checker's freeze scope) and listed here;
`tests/test_errors.py` holds this table to the code.

| class | defined in | means |
| --- | --- | --- |
| `HarnessError` | `harness.errors` | the root |
| `UserError` | `harness.errors` | bad input; one line per `Problem`, exit 2 |
| `PredicateError` (ValueError) | `harness.contracts.predicate.errors` | not in the language |
| `PredicateRuntimeError` | `harness.contracts.predicate.errors` | evaluation failed (`reason`) |
| `MissingPath` | `harness.contracts.predicate.errors` | `x.name` on an object without `name` |
| `AbsentKey` | `harness.contracts.predicate.errors` | `x[k]` with no key or index k |
| `PredicateTypeError` | `harness.contracts.predicate.errors` | values of the wrong type |
| `BudgetExceeded` | `harness.contracts.predicate.errors` | too many steps, or a value too large |
| `KeyWrittenTwice` (ConstructorError) | `harness.contracts.loader` | a YAML key given twice |
| `NotBuilt` (ConstructorError) | `harness.contracts.loader` | `!!int abc`, `!!set`: not built |
| `ClauseCompileError` (ValueError) | `harness.checker.probes` | a clause does not compile |
| `ScanError` (ValueError) | `harness.scanner.flags` | the scanned source cannot be read or parsed |
| `StaleMutant` | `harness.mutation.apply` | the installed function is not the mutant's original |
| `MutantCompileError` | `harness.mutation.apply` | the mutated text does not compile |
| `DefinitionError` | `harness.mutation.apply` | defining the mutated function raises |
| `UnknownOperator` (KeyError) | `harness.mutation.registry` | no operator of that name |
| `OperatorRegistrationError` (Type-, ValueError) | `harness.mutation.registry` | bad `register` |
| `ResetUnsupported` | `harness.targets.adapter` | the target has no reset path |
| `RunInterrupted` | `harness.execution.runner` | Ctrl-C or SIGTERM stopped a run |
| `FreezeMismatch` | `harness.execution.dask_executor` | a worker's installed inputs differ |
| `HostLost` | `harness.execution.dask_executor` | the batch host ended mid-batch |
| `HostStartFailed` | `harness.execution.dask_executor` | a worker could not start its batch host |

Outside the root, on purpose: `harness.execution.isolation.Stopped` is a `KeyboardInterrupt`
(SIGTERM raised like Ctrl-C) so that no `except Exception` swallows it, and
`harness.mutation.ast_operator._Fallback` is private control flow, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound="BaseModel")

USER_ERROR_EXIT = 2


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input the user wrote."""

    file: str
    where: str
    message: str
    fix: str

    def line(self) -> str:
        """One line: a control character a value brought in (a NUL, a newline) escaped."""
        text = f"{self.file}: {self.where}: {self.message}; fix: {self.fix}"
        return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class HarnessError(Exception):
    """The root of every exception the harness raises (the table above lists them)."""


class UserError(HarnessError):
    """Bad input. The CLI prints each problem's line and exits with code 2, no traceback."""

    def __init__(self, problems: Problem | list[Problem]):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        super().__init__("\n".join(p.line() for p in self.problems))


def user_error(file: str, where: str, message: str, fix: str) -> UserError:
    return UserError(Problem(file, where, message, fix))


def field_errors(path: Path, exc: ValidationError, fix: str, say: str = "") -> UserError:
    """One `Problem` per field pydantic refused in a file the harness wrote itself (a
    record, manifest or corpus): the field's dotted path, `say` before its message."""
    return UserError(
        [
            Problem(str(path), ".".join(map(str, error["loc"])) or "<top>", say + error["msg"], fix)
            for error in exc.errors()
        ]
    )


def read_json_model(path: Path, model: type[M], fix: str) -> M:
    """`path`'s JSON as `model`; a file that is not UTF-8 JSON, or a field missing or of the
    wrong form, is a `UserError` naming the file and each field, with `fix` (the harness
    writes these files itself: a bad one was edited or cut short)."""
    from pydantic import ValidationError

    try:
        return model.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise field_errors(path, exc, fix) from None
    except OSError as exc:
        raise UserError(Problem(str(path), "<top>", f"unreadable ({exc.strerror})", fix)) from None
