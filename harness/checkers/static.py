"""Old import path of the static scanner run as a checker: `harness.scanner.as_checker`."""

from harness.scanner.as_checker import STATIC_VERSION, StaticScannerChecker, flag_clauses

__all__ = ["STATIC_VERSION", "StaticScannerChecker", "flag_clauses"]
