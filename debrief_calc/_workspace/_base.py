"""The workspace a :class:`~debrief_calc.Workspace` works on: its folder, its artifact store, its
limits, the two services it owns, and the record of which plots a call changed."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from debrief_calc.errors import ValidationFailed
from llmem.core.arguments import checked_call
from llmem.core.config import Limits, resolve_store_root
from llmem.core.store import ArtifactStore

if TYPE_CHECKING:
    from debrief_calc.calc.service import CalcService
    from debrief_calc.state.service import StateService
    from debrief_calc.state.tasks import PlotTasks

__all__ = ["Change", "WorkspaceBase", "recording_changes", "tool_method"]

F = TypeVar("F", bound=Callable[..., Any])

#: (plot filename, the aspects it changed: ``list``, ``features``, ``selection``, ``time``, ``viewport``)
Change = tuple[str, list[str]]
_CHANGES: ContextVar[list[Change] | None] = ContextVar("debrief_workspace_changes", default=None)


@contextlib.contextmanager
def recording_changes() -> Iterator[list[Change]]:
    """Collect the plot changes the Workspace calls made inside the block (in this thread or
    task), in order: a server notifies its subscribers of them."""
    changes: list[Change] = []
    token = _CHANGES.set(changes)
    try:
        yield changes
    finally:
        _CHANGES.reset(token)


def tool_method(fn: F) -> F:
    """A Workspace method that is a tool: its arguments are checked against its signature as
    the server's SDK checks the tool's (the same annotations: they are the tool's schema), a
    failure raising :class:`~debrief_calc.ValidationFailed` naming the field and the rule."""
    return cast(F, checked_call("VALIDATION_FAILED", ValidationFailed)(fn))


class WorkspaceBase:
    """The folder, the store and the services; the tool methods live in the mixins."""

    def __init__(self, path: str | Path, *, store: str | None = None, limits: Limits | None = None) -> None:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise ValidationFailed(
                f"workspace {str(folder)!r} is not a folder: give the folder of the .plot.json and REP files",
                details={"field": "path", "rule": "an existing folder"},
            )
        # the servers' --store, whose default is LLMEM_STORE, else the workspace's own
        where = store if store is not None else os.environ.get("LLMEM_STORE") or "workspace"
        if not where.strip():
            raise ValidationFailed(
                "store must be 'workspace', 'user' or the path of a folder", details={"field": "store"}
            )
        root = folder.resolve()
        self._setup(ArtifactStore(resolve_store_root(where, root), root), limits or Limits.from_env())

    @classmethod
    def _over(cls, store: ArtifactStore, limits: Limits) -> Self:
        """A Workspace on a store a server has already settled (its ``--workspace`` and ``--store``)."""
        made = cls.__new__(cls)
        made._setup(store, limits)
        return made

    def _setup(self, store: ArtifactStore, limits: Limits) -> None:
        self._store = store
        self._limits = limits

    @property
    def path(self) -> Path:
        """The workspace folder (absolute, symlinks resolved)."""
        return self._store.workspace

    @property
    def store_path(self) -> Path:
        """The folder of the artifact store this workspace shares with the servers."""
        return self._store.root

    @property
    def limits(self) -> Limits:
        """The limits answers keep to (the servers' own: ``LLMEM_MAX_ANSWER_CHARS`` and the others)."""
        return self._limits

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r}, store={str(self.store_path)!r})"

    # -- the services, made at first use ---------------------------------------------------

    @functools.cached_property
    def _calc(self) -> CalcService:
        from debrief_calc.calc.service import CalcService

        return CalcService(self._store, self._limits)

    @functools.cached_property
    def _state(self) -> StateService:
        from debrief_calc.state.service import StateService

        return StateService(self._store, self._limits)

    @functools.cached_property
    def _tasks(self) -> PlotTasks:
        from debrief_calc.state.tasks import PlotTasks

        return PlotTasks(self._state)

    @staticmethod
    def _changed(filename: str, aspects: list[str]) -> None:
        changes = _CHANGES.get()
        if changes is not None and aspects:
            changes.append((filename, list(aspects)))
