"""Window events with sync and async listeners (context §3.1).

Listeners observe and, for the two decision events (``context_overflow_action``,
``pre_compact``), may answer; the window code reads an answer only where the spec lets it.
A listener that raises is logged and skipped: observers never break a turn, and never
decide provider allowance or recovery strategy [seed].
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger(__name__)

CONTEXT_CRITICAL = "context_critical"
CONTEXT_OVERFLOW_ACTION = "context_overflow_action"
PRE_COMPACT = "pre_compact"
POST_COMPACT = "post_compact"
TOOL_RESULT_OFFLOADED = "tool_result_offloaded"
TURN_COMPLETED = "turn_completed"
SESSION_ENDED = "session_ended"

EVENTS = (
    CONTEXT_CRITICAL, CONTEXT_OVERFLOW_ACTION, PRE_COMPACT, POST_COMPACT,
    TOOL_RESULT_OFFLOADED, TURN_COMPLETED, SESSION_ENDED,
)

Listener = Callable[[dict[str, Any]], "Any | Awaitable[Any]"]


class EventBus:
    """Ordered listeners per event: lower ``priority`` first, then registration order."""

    def __init__(self) -> None:
        self._listeners: dict[str, list[tuple[int, int, Listener]]] = {name: [] for name in EVENTS}
        self._order = 0
        self._tasks: set[Any] = set()  # scheduled listener tasks, kept alive until done

    def on(self, event: str, listener: Listener, *, priority: int = 50) -> Listener:
        """Register ``listener`` (a function or coroutine function); returns it for decorator use."""
        if event not in self._listeners:
            from ..errors import input_invalid

            raise input_invalid(
                "event", "not_one_of", f"unknown window event {event!r}", value=event, allowed=list(EVENTS)
            )
        self._order += 1
        self._listeners[event].append((priority, self._order, listener))
        self._listeners[event].sort(key=lambda item: (item[0], item[1]))
        return listener

    def off(self, event: str, listener: Listener) -> None:
        self._listeners[event] = [item for item in self._listeners.get(event, []) if item[2] is not listener]

    def emit(self, event: str, payload: dict[str, Any]) -> list[Any]:
        """Call every listener with its own copy of ``payload``; return the non-``None`` answers.

        A coroutine is run to completion when no event loop runs in this thread. Inside a
        running loop it is scheduled as a task and its answer is not read (use :meth:`aemit`).
        """
        answers = []
        for _, _, listener in list(self._listeners.get(event, [])):
            try:
                answer = listener(dict(payload))
                if inspect.isawaitable(answer):
                    answer = self._run_awaitable(answer)
            except Exception:  # observers never break the turn
                log.warning("window event %s listener %r failed", event, listener, exc_info=True)
                continue
            if answer is not None:
                answers.append(answer)
        return answers

    async def aemit(self, event: str, payload: dict[str, Any]) -> list[Any]:
        """Like :meth:`emit`, awaiting async listeners in the caller's loop."""
        answers = []
        for _, _, listener in list(self._listeners.get(event, [])):
            try:
                answer = listener(dict(payload))
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception:
                log.warning("window event %s listener %r failed", event, listener, exc_info=True)
                continue
            if answer is not None:
                answers.append(answer)
        return answers

    def _run_awaitable(self, awaitable: Awaitable[Any]) -> Any:
        import asyncio  # lazy: only async listeners need it

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(_await(awaitable))
        task = loop.create_task(_await(awaitable))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return None


async def _await(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def emit(bus: EventBus | None, event: str, payload: dict[str, Any]) -> list[Any]:
    """``bus.emit`` that tolerates no bus, so callers need not guard every event."""
    return bus.emit(event, payload) if bus is not None else []
