"""The secrets a session masks in everything it shows, speaks, prints and stores: every
key in its settings (chat, vision, speech, voice) and the VTube Studio plugin token
(kept in a file by the bridge; a token it is given later joins through `add`). It is
the log's own `Redactor` when logging is set up, so the log masks the same secrets."""

from __future__ import annotations

import contextlib

from app.config import Settings, secret_fields
from app.logs import log_redactor
from app.redaction import Redactor
from app.session.services import vtube_studio_token_file

__all__ = ["session_redactor"]


def session_redactor(settings: Settings) -> Redactor:
    redactor = log_redactor() or Redactor()
    for _, _, value in secret_fields(settings):
        redactor.add(value.get_secret_value())
    with contextlib.suppress(OSError, UnicodeDecodeError):  # none: never paired
        redactor.add(vtube_studio_token_file().read_text(encoding="utf-8").strip())
    return redactor
