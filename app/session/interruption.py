"""The one interruption mechanism: a generation counter that every stage of a turn checks.

`interrupt()` moves the counter on, so every `Scope` taken before it is no longer live
and each stage stops at its next check. What must happen at once (the sink falls
silent, the turn's task is cancelled wherever it waits, a barge-in stops waiting for
words) hangs off the same call as the scope's hooks, each run exactly once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass

log = logging.getLogger(__name__)

Hook = Callable[[], object]  # what a hook returns is ignored


class Interruptions:
    """The generation counter and the hooks of its current generation."""

    def __init__(self) -> None:
        self._current = 0
        self._hooks: list[Hook] = []

    @property
    def generation(self) -> int:
        return self._current

    def scope(self) -> Scope:
        """The current generation: live until the next `interrupt()`."""
        return Scope(self, self._current)

    def interrupt(self) -> None:
        """End the current generation: every scope of it stops, its hooks run now."""
        self._current += 1
        hooks, self._hooks = self._hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception:  # one hook's failure must not keep the others from running
                log.exception("an interruption hook failed")

    def _add(self, generation: int, hook: Hook) -> Hook:
        if generation != self._current:
            hook()  # interrupted already: at once
            return lambda: None
        self._hooks.append(hook)

        def remove() -> None:
            with contextlib.suppress(ValueError):
                self._hooks.remove(hook)

        return remove


@dataclass(frozen=True, slots=True)
class Scope:
    """One generation, as a turn's stages hold it."""

    owner: Interruptions
    generation: int

    @property
    def live(self) -> bool:
        """Not interrupted since this scope was taken."""
        return self.owner.generation == self.generation

    def on_interrupt(self, hook: Hook) -> Hook:
        """Run `hook` when this generation is interrupted (at once if it was already);
        returns a function that takes it back."""
        return self.owner._add(self.generation, hook)

    @contextlib.contextmanager
    def hooked(self, hook: Hook) -> Iterator[None]:
        """`hook` runs if this generation is interrupted within the block."""
        remove = self.on_interrupt(hook)
        try:
            yield
        finally:
            remove()
