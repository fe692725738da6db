"""A user tool's command line filled in with the model's values, safely.

No shell is involved, so a value can never become a second command; but a program
reads an argument that starts with "-" as an option (`ls {path}` given "-la" lists
differently; `find {dir}` given "-delete" deletes). Such a value is refused unless it
comes after a literal `--` in the command (the usual end of options) or the tool says
it takes options (`accepts_options`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

__all__ = ["PLACEHOLDER", "fill_command"]

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
END_OF_OPTIONS = "--"


def fill_command(
    argv: Sequence[str], values: Mapping[str, str], *, accepts_options: bool = False
) -> list[str]:
    """`argv` with every `{name}` replaced by `values[name]`. Raises `ValueError`, in words
    the model can act on, for a value that would be read as an option or that no
    program can receive (a NUL character)."""
    filled: list[str] = []
    after_end = False
    for template in argv:
        arg = PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
        if "\0" in arg:
            raise ValueError("A value holds a NUL character, which no program can be given.")
        leading = PLACEHOLDER.match(template)  # the argument starts with a value
        if leading and arg.startswith("-") and not after_end and not accepts_options:
            name = leading.group(1)
            program = argv[0].rsplit("/", 1)[-1]
            raise ValueError(
                f"The value {values[name]!r} for {name} starts with '-', so {program} would "
                "take it as an option; this tool takes no options. To mean a file of that "
                f"name, give ./{values[name]}."
            )
        if template == END_OF_OPTIONS:
            after_end = True
        filled.append(arg)
    return filled
