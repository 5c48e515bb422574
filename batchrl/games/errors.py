"""What a game module says about a logged record it will not turn into rows."""

from __future__ import annotations


class RejectedRecord(ValueError):
    """A logged hand or game the rules refuse; ``kind`` names the check, for reports."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
