from .db import Database
from .hookspecs import hookimpl, hookspec
from .migrations import Migrations
from .utils import ANY, suggest_column_types

__all__ = [
    "ANY",
    "Database",
    "Migrations",
    "hookimpl",
    "hookspec",
    "suggest_column_types",
]
