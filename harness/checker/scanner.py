"""Old import path of the static scanner, kept for outside code: it lives in `harness.scanner`.

Not part of the reference checker (its `scope_files()` leaves this file out).
"""

from harness.scanner import ScanCheck, ScanError, ScanFlag, scan_files, scan_source, scan_target

__all__ = ["ScanCheck", "ScanError", "ScanFlag", "scan_files", "scan_source", "scan_target"]
