import binascii
import contextlib
import datetime
import decimal
import importlib
import inspect
import itertools
import json
import os
import pathlib
import re
import secrets
import textwrap
import uuid
from collections import namedtuple
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import (
    Any,
    TypeVar,
    Union,
    cast,
)

from sqlite_fts4 import rank_bm25
from sqlite_utils.plugins import ensure_plugins_loaded, pm

from .create_table_parser import (
    Check,
    ColumnComments,
    ParseError,
    Unique,
    UniqueColumn,
    check_references_identifier,
    parse_autoincrement,
    parse_checks,
    parse_column_comments,
    parse_uniques,
    rewrite_check_expression,
    sql_ends_in_line_comment,
)
from .utils import (
    ANY,
    OperationalError,
    chunks,
    column_affinity,
    dedupe_keys,
    find_spatialite,
    hash_record,
    progressbar,
    sqlite3,
    suggest_column_types,
    types_for_column_types,
)

try:
    iterdump = importlib.import_module("sqlite_dump").iterdump
except ImportError:
    iterdump = None


SQLITE_MAX_VARS = 999


def quote_identifier(identifier: str) -> str:
    """
    Quote an identifier (table name, column name, etc.) using double quotes.

    Double quotes inside the identifier are escaped by doubling them.
    """
    return '"{}"'.format(identifier.replace('"', '""'))


class Database:
    """
    Wrapper for a SQLite database connection that adds a variety of useful utility methods.

    To create an instance::

        # create data.db file, or open existing:
        db = Database("data.db")
        # Create an in-memory database:
        dB = Database(memory=True)

    :param filename_or_conn: String path to a file, or a ``pathlib.Path`` object, or a
      ``sqlite3`` connection
    :param memory: set to ``True`` to create an in-memory database
    :param memory_name: creates a named in-memory database that can be shared across multiple connections
    :param recreate: set to ``True`` to delete and recreate a file database (**dangerous**)
    :param recursive_triggers: defaults to ``True``, which sets ``PRAGMA recursive_triggers=on;`` -
      set to ``False`` to avoid setting this pragma
    :param tracer: set a tracer function (``print`` works for this) which will be called with
      ``sql, parameters`` every time a SQL query is executed
    :param use_counts_table: set to ``True`` to use a cached counts table, if available. See
      :ref:`python_api_cached_table_counts`
    :param use_old_upsert: set to ``True`` to force the older upsert implementation. See
      :ref:`python_api_old_upsert`
    :param strict: Apply STRICT mode to all created tables (unless overridden)
    """

    def __init__(
        self,
        filename_or_conn: str | pathlib.Path | sqlite3.Connection | None = None,
        memory: bool = False,
        memory_name: str | None = None,
        recreate: bool = False,
        recursive_triggers: bool = True,
        tracer: Tracer | None = None,
        use_counts_table: bool = False,
        execute_plugins: bool = True,
        use_old_upsert: bool = False,
        strict: bool = False,
    ):
        self.memory_name = None
        self.memory = False
        self.use_old_upsert = use_old_upsert
        if not (
            (filename_or_conn is not None and (not memory and not memory_name))
            or (filename_or_conn is None and (memory or memory_name))
        ):
            raise ValueError("Either specify a filename_or_conn or pass memory=True")
        if memory_name:
            uri = f"file:{memory_name}?mode=memory&cache=shared"
            self.conn = sqlite3.connect(
                uri,
                uri=True,
                check_same_thread=False,
            )
            self.memory = True
            self.memory_name = memory_name
        elif memory or filename_or_conn == ":memory:":
            self.conn = sqlite3.connect(":memory:")
            self.memory = True
        elif isinstance(filename_or_conn, (str, pathlib.Path)):
            if recreate and os.path.exists(filename_or_conn):
                try:
                    os.remove(filename_or_conn)
                except OSError:
                    # Avoid mypy and __repr__ errors, see:
                    # https://github.com/simonw/sqlite-utils/issues/503
                    self.conn = sqlite3.connect(":memory:")
                    raise
            self.conn = sqlite3.connect(str(filename_or_conn))
        else:
            if recreate:
                raise ValueError("recreate cannot be used with connections, only paths")
            self.conn = cast(sqlite3.Connection, filename_or_conn)
            # Python 3.12+ autocommit=True/False connections make commit()
            # and rollback() behave differently, silently breaking the
            # transaction handling used by every write method
            autocommit = getattr(self.conn, "autocommit", None)
            if autocommit is not None and autocommit != getattr(
                sqlite3, "LEGACY_TRANSACTION_CONTROL", -1
            ):
                raise TransactionError(
                    "sqlite-utils requires a connection that uses the default "
                    "transaction handling - connections created with "
                    "autocommit=True or autocommit=False are not supported"
                )
        self._tracer: Tracer | None = tracer
        if recursive_triggers:
            self.execute("PRAGMA recursive_triggers=on;")
        self._registered_functions: set = set()
        self.use_counts_table = use_counts_table
        if execute_plugins:
            ensure_plugins_loaded()
            pm.hook.prepare_connection(conn=self.conn)
        self.strict = strict

    def __getitem__(self, table_name: str) -> Union["Table", "View"]:
        """
        ``db[name]`` returns a :class:`.Table` object for the table with the specified name,
        or a :class:`.View` object if the name matches an existing SQL view.
        If neither exists yet, a table is assumed - it will be created the first
        time data is inserted into it.

        :param table_name: The name of the table or view
        """
        if table_name in self.view_names():
            return self.view(table_name)
        return self.table(table_name)

    def execute(
        self, sql: str, parameters: Sequence | dict[str, Any] | None = None
    ) -> sqlite3.Cursor:
        """
        Execute SQL query and return a ``sqlite3.Cursor``.

        A write statement - ``INSERT``, ``UPDATE``, ``CREATE TABLE`` and so on -
        is committed automatically, unless a transaction is already open, in
        which case it becomes part of that transaction. See
        :ref:`python_api_transactions`.

        :param sql: SQL query to execute
        :param parameters: Parameters to use in that query - an iterable for ``where id = ?``
          parameters, or a dictionary for ``where id = :id``
        """
        if self._tracer:
            self._tracer(sql, parameters)
        was_in_transaction = self.conn.in_transaction
        try:
            if parameters is not None:
                cursor = self.conn.execute(sql, parameters)
            else:
                cursor = self.conn.execute(sql)
        except Exception:
            if not was_in_transaction and self.conn.in_transaction:
                # The failed statement opened an implicit transaction that
                # nothing would ever commit - roll it back, otherwise it
                # would capture every subsequent write
                self.conn.execute("ROLLBACK")
            raise
        if (
            not was_in_transaction
            and self.conn.in_transaction
            and cursor.description is None
            and _first_keyword(sql) not in _TRANSACTION_CONTROL_KEYWORDS
        ):
            # The statement opened an implicit transaction - commit it, so
            # that execute() behaves consistently with the rest of the
            # library and identically across connection modes
            self.conn.execute("COMMIT")
        return cursor

    def table(self, table_name: str, **kwargs: Any) -> "Table":
        """
        Return a table object, optionally configured with default options.

        See :ref:`reference_db_table` for option details.

        :param table_name: Name of the table
        """
        if table_name in self.view_names():
            raise NoTable(f"Table {table_name} is actually a view")
        kwargs.setdefault("strict", self.strict)
        return Table(self, table_name, **kwargs)

    def _ensure_counts_table(self) -> None:
        with self.atomic():
            self.execute(_COUNTS_TABLE_CREATE_SQL.format(self._counts_table_name))

    def reset_counts(self) -> None:
        "Re-calculate cached counts for tables."
        tables = [table for table in self.tables if table.has_counts_triggers]
        with self.atomic():
            self._ensure_counts_table()
            counts_table = self.table(self._counts_table_name)
            counts_table.delete_where()
            counts_table.insert_all(
                {"table": table.name, "count": table.execute_count()}
                for table in tables
            )


class Queryable:

    def __init__(self, db: "Database", name: str) -> None:
        self.db = db
        self.name = name

    def pks_and_rows_where(
        self,
        where: str | None = None,
        where_args: Sequence | dict[str, Any] | None = None,
        order_by: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> Generator[tuple[Any, dict[str, Any]], None, None]:
        """
        Like ``.rows_where()`` but returns ``(pk, row)`` pairs - ``pk`` can be a single value or tuple.

        :param where: SQL where fragment to use, for example ``id > ?``
        :param where_args: Parameters to use with that fragment - an iterable for ``id > ?``
          parameters, or a dictionary for ``id > :id``
        :param order_by: Column or fragment of SQL to order by
        :param select: Comma-separated list of columns to select - defaults to ``*``
        :param limit: Integer number of rows to limit to
        :param offset: Integer for SQL offset
        """
        # This method is defined on Queryable so it serves views too, which
        # have no pks property - sort pk columns into declaration order here
        pk_columns = sorted(
            (column for column in self.columns if column.is_pk),
            key=lambda column: column.is_pk,
        )
        pks = [column.name for column in pk_columns]
        select_parts = [quote_identifier(column.name) for column in self.columns]
        if not pks:
            # rowid is left unquoted: it is not a real column, and SQLite
            # turns a double-quoted identifier that does not resolve into a
            # string literal - on a view that would silently select the
            # string 'rowid' instead of raising an error
            select_parts.insert(0, "rowid")
            pks = ["rowid"]
        select = ",".join(select_parts)
        for row in self.rows_where(
            select=select,
            where=where,
            where_args=where_args,
            order_by=order_by,
            limit=limit,
            offset=offset,
        ):
            row_pk = tuple(row[pk] for pk in pks)
            if len(row_pk) == 1:
                row_pk = row_pk[0]
            yield row_pk, row


class Table(Queryable):
    """
    Tables should usually be initialized using the ``db.table(table_name)`` or
    ``db[table_name]`` methods.

    The following optional parameters can be passed to ``db.table(table_name, ...)``:

    :param db: Provided by ``db.table(table_name)``
    :param name: Provided by ``db.table(table_name)``
    :param pk: Name of the primary key column, or tuple of columns
    :param foreign_keys: List of foreign key definitions
    :param column_order: List of column names in the order they should be in the table
    :param not_null: List of columns that cannot be null
    :param defaults: Dictionary of column names and default values
    :param batch_size: Integer number of rows to insert at a time
    :param hash_id: Name of a column to create and use as a primary key, where the
      value of that primary key is derived from a hash of the row values
    :param hash_id_columns: List of columns to use for the hash_id
    :param alter: If True, automatically alter the table if it doesn't match the schema
    :param ignore: If True, ignore rows that already exist when inserting
    :param replace: If True, replace rows that already exist when inserting
    :param extracts: Dictionary or list of column names to extract into a separate table on inserts
    :param conversions: Dictionary of column names and conversion functions
    :param columns: Dictionary of column names to column types
    :param strict: If True, apply STRICT mode to table
    """

    def __init__(
        self,
        db: Database,
        name: str,
        pk: Any | None = None,
        foreign_keys: ForeignKeysType | None = None,
        column_order: list[str] | None = None,
        not_null: Iterable[str] | None = None,
        defaults: dict[str, Any] | None = None,
        batch_size: int = 100,
        hash_id: str | None = None,
        hash_id_columns: Iterable[str] | None = None,
        alter: bool = False,
        ignore: bool = False,
        replace: bool = False,
        extracts: dict[str, str] | list[str] | None = None,
        conversions: dict | None = None,
        columns: dict[str, Any] | None = None,
        strict: bool = False,
    ):
        super().__init__(db, name)
        self._defaults = {
            "pk": pk,
            "foreign_keys": foreign_keys,
            "column_order": column_order,
            "not_null": not_null,
            "defaults": defaults,
            "batch_size": batch_size,
            "hash_id": hash_id,
            "hash_id_columns": hash_id_columns,
            "alter": alter,
            "ignore": ignore,
            "replace": replace,
            "extracts": extracts,
            "conversions": conversions or {},
            "columns": columns,
            "strict": strict,
        }

    def value_or_default(self, key: str, value: T | Default) -> T:
        if value is DEFAULT:
            return cast(T, self._defaults[key])
        return cast(T, value)

    def insert(
        self,
        record: dict[str, Any],
        pk: PrimaryKey | Default | None = DEFAULT,
        foreign_keys: ForeignKeysType | Default | None = DEFAULT,
        column_order: list[str] | Default | None = DEFAULT,
        not_null: Iterable[str] | Default | None = DEFAULT,
        defaults: dict[str, Any] | Default | None = DEFAULT,
        hash_id: str | Default | None = DEFAULT,
        hash_id_columns: Iterable[str] | Default | None = DEFAULT,
        alter: bool | Default | None = DEFAULT,
        ignore: bool | Default | None = DEFAULT,
        replace: bool | Default | None = DEFAULT,
        extracts: dict[str, str] | list[str] | Default | None = DEFAULT,
        conversions: dict[str, str] | Default | None = DEFAULT,
        columns: dict[str, Any] | Default | None = DEFAULT,
        strict: bool | Default | None = DEFAULT,
    ) -> "Table":
        """
        Insert a single record into the table. The table will be created with a schema that matches
        the inserted record if it does not already exist, see :ref:`python_api_creating_tables`.

        - ``record`` - required: a dictionary representing the record to be inserted.

        The other parameters are optional, and mostly influence how the new table will be created if
        that table does not exist yet.

        Each of them defaults to ``DEFAULT``, which indicates that the default setting for the current
        ``Table`` object (specified in the table constructor) should be used.

        :param record: Dictionary record to be inserted
        :param pk: If creating the table, which column should be the primary key.
        :param foreign_keys: See :ref:`python_api_foreign_keys`.
        :param column_order: List of strings specifying a full or partial column order
          to use when creating the table.
        :param not_null: Set of strings specifying columns that should be ``NOT NULL``.
        :param defaults: Dictionary specifying default values for specific columns.
        :param hash_id: Name of a column to create and use as a primary key, where the
          value of that primary key will be derived as a SHA1 hash of the other column values
          in the record. ``hash_id="id"`` is a common column name used for this.
        :param alter: Boolean, should any missing columns be added automatically?
        :param ignore: Boolean, if a record already exists with this primary key, ignore this insert.
        :param replace: Boolean, if a record already exists with this primary key, replace it with this new record.
        :param extracts: A list of columns to extract to other tables, or a dictionary that maps
          ``{column_name: other_table_name}``. See :ref:`python_api_extracts`.
        :param conversions: Dictionary specifying SQL conversion functions to be applied to the data while it
          is being inserted, for example ``{"name": "upper(?)"}``. See :ref:`python_api_conversions`.
        :param columns: Dictionary over-riding the detected types used for the columns, for example
          ``{"age": int, "weight": float}``.
        :param strict: Boolean, apply STRICT mode if creating the table.
        """
        return self.insert_all(
            [record],
            pk=pk,
            foreign_keys=foreign_keys,
            column_order=column_order,
            not_null=not_null,
            defaults=defaults,
            hash_id=hash_id,
            hash_id_columns=hash_id_columns,
            alter=alter,
            ignore=ignore,
            replace=replace,
            extracts=extracts,
            conversions=conversions,
            columns=columns,
            strict=strict,
        )

    def insert_all(
        self,
        records: Iterable[dict[str, Any]] | Iterable[Sequence[Any]],
        pk: PrimaryKey | Default | None = DEFAULT,
        foreign_keys: ForeignKeysType | Default | None = DEFAULT,
        column_order: list[str] | Default | None = DEFAULT,
        not_null: Iterable[str] | Default | None = DEFAULT,
        defaults: dict[str, Any] | Default | None = DEFAULT,
        batch_size: int | Default = DEFAULT,
        hash_id: str | Default | None = DEFAULT,
        hash_id_columns: Iterable[str] | Default | None = DEFAULT,
        alter: bool | Default | None = DEFAULT,
        ignore: bool | Default | None = DEFAULT,
        replace: bool | Default | None = DEFAULT,
        truncate: bool = False,
        extracts: dict[str, str] | list[str] | Default | None = DEFAULT,
        conversions: dict[str, str] | Default | None = DEFAULT,
        columns: dict[str, Any] | Default | None = DEFAULT,
        upsert: bool = False,
        analyze: bool = False,
        strict: bool | Default | None = DEFAULT,
    ) -> "Table":
        """
        Like ``.insert()`` but takes a list of records and ensures that the table
        that it creates (if table does not exist) has columns for ALL of that data.

        Use ``analyze=True`` to run ``ANALYZE`` after the insert has completed.
        """
        pk = self.value_or_default("pk", pk)
        foreign_keys = self.value_or_default("foreign_keys", foreign_keys)
        column_order = self.value_or_default("column_order", column_order)
        not_null = self.value_or_default("not_null", not_null)
        defaults = self.value_or_default("defaults", defaults)
        batch_size = self.value_or_default("batch_size", batch_size)
        hash_id = self.value_or_default("hash_id", hash_id)
        hash_id_columns = self.value_or_default("hash_id_columns", hash_id_columns)
        alter = self.value_or_default("alter", alter)
        ignore = self.value_or_default("ignore", ignore)
        replace = self.value_or_default("replace", replace)
        extracts = self.value_or_default("extracts", extracts)
        conversions = self.value_or_default("conversions", conversions) or {}
        columns = self.value_or_default("columns", columns)
        strict = self.value_or_default("strict", strict)

        if hash_id_columns and hash_id is None:
            hash_id = "id"

        if upsert and not pk and not hash_id and self.exists():
            existing_pks = [column.name for column in self.columns if column.is_pk]
            if existing_pks:
                pk = existing_pks[0] if len(existing_pks) == 1 else tuple(existing_pks)

        if upsert and (not pk and not hash_id):
            raise PrimaryKeyRequired("upsert() requires a pk")

        if hash_id and pk:
            raise ValueError("Use either pk= or hash_id=")
        if hash_id_columns and (hash_id is None):
            hash_id = "id"
        if hash_id:
            pk = hash_id

        # pk columns missing from an existing table are an error - unless
        # alter=True, where a pk column supplied by the records will be
        # added, so validation waits until the record keys are known
        deferred_invalid_pk_check = None
        if pk and not hash_id and self.exists():
            pk_cols = [pk] if isinstance(pk, str) else list(pk)
            existing_columns = self.columns_dict
            # rowid and its aliases are valid primary keys for a rowid table
            # even though they are not listed among the table's columns
            rowid_aliases = ROWID_ALIASES if self.use_rowid else frozenset()
            missing_pk_cols = [
                col
                for col in pk_cols
                if col.lower() not in rowid_aliases
                and resolve_casing(col, existing_columns) not in existing_columns
            ]
            if missing_pk_cols:
                invalid_pk_error = InvalidColumns(
                    "Invalid primary key column{} {} for table {} with columns {}".format(
                        "s" if len(missing_pk_cols) > 1 else "",
                        missing_pk_cols,
                        self.name,
                        list(existing_columns),
                    )
                )
                if not alter:
                    raise invalid_pk_error
                deferred_invalid_pk_check = (missing_pk_cols, invalid_pk_error)

        if ignore and replace:
            raise ValueError("Use either ignore=True or replace=True, not both")
        all_columns = []
        first = True
        num_records_processed = 0

        # Detect if we're using list-based iteration or dict-based iteration
        list_mode = False
        column_names: list[str] = []

        # Fix up any records with square braces in the column names (only for dict mode)
        # We'll handle this differently for list mode
        records_iter = iter(records)

        # Peek at first record to determine mode:
        try:
            first_record = next(records_iter)
        except StopIteration:
            return self  # It was an empty list

        # Check if this is list mode or dict mode
        if isinstance(first_record, (list, tuple)):
            # List/tuple mode: first record should be column names
            list_mode = True
            if not all(isinstance(col, str) for col in first_record):
                raise ValueError(
                    "When using list-based iteration, the first yielded value must be a list of column name strings"
                )
            column_names = cast(list[str], list(first_record))
            all_columns = column_names
            num_columns = len(column_names)
            # Get the actual first data record
            try:
                first_record = next(records_iter)
            except StopIteration:
                return self  # Only headers, no data
            if not isinstance(first_record, (list, tuple)):
                raise ValueError(  # noqa: TRY004
                    "After column names list, all subsequent records must also be lists"
                )
        else:
            # Dict mode: traditional behavior
            records_iter = itertools.chain([first_record], records_iter)
            try:
                first_record = next(records_iter)
            except StopIteration:
                return self
            first_record = cast(dict[str, Any], first_record)
            num_columns = len(first_record.keys())

        if num_columns > SQLITE_MAX_VARS:
            raise ValueError(f"Rows can have a maximum of {SQLITE_MAX_VARS} columns")
        batch_size = (
            1
            if num_columns == 0
            else max(1, min(batch_size, SQLITE_MAX_VARS // num_columns))
        )
        self.last_rowid = None
        self.last_pk = None
        if truncate and self.exists():
            with self.db.atomic():
                self.db.execute(f"DELETE FROM {quote_identifier(self.name)};")
        result = None
        for chunk in chunks(itertools.chain([first_record], records_iter), batch_size):
            chunk = list(chunk)
            num_records_processed += len(chunk)
            if first:
                if not self.exists():
                    # Use the first batch to derive the table names
                    if list_mode:
                        # Convert list records to dicts for type detection
                        chunk_as_dicts = [dict(zip(column_names, row)) for row in chunk]
                        column_types = suggest_column_types(chunk_as_dicts)
                    else:
                        dict_chunk = cast(list[dict[str, Any]], chunk)
                        column_types = suggest_column_types(dict_chunk)
                    if extracts:
                        for col in extracts:
                            if col in column_types:
                                column_types[col] = (
                                    int  # This will be an integer foreign key
                                )
                    column_types.update(columns or {})
                    self.create(
                        column_types,
                        pk,
                        foreign_keys,
                        column_order=column_order,
                        not_null=not_null,
                        defaults=defaults,
                        hash_id=hash_id,
                        hash_id_columns=hash_id_columns,
                        extracts=extracts,
                        strict=strict,
                    )
                if list_mode:
                    # In list mode, columns are already known
                    all_columns = list(column_names)
                    if hash_id:
                        all_columns.insert(0, hash_id)
                else:
                    all_columns_set: set[str] = set()
                    for record in cast(list[dict[str, Any]], chunk):
                        all_columns_set.update(record.keys())
                    all_columns = sorted(all_columns_set)
                    if hash_id:
                        all_columns.insert(0, hash_id)
                if deferred_invalid_pk_check is not None:
                    # alter=True - pk columns the table lacks are valid if
                    # the records supply them, otherwise raise the error
                    missing_pk_cols, invalid_pk_error = deferred_invalid_pk_check
                    record_columns = {column: True for column in all_columns}
                    if any(
                        resolve_casing(col, record_columns) not in record_columns
                        for col in missing_pk_cols
                    ):
                        raise invalid_pk_error
            else:
                if not list_mode:
                    for record in cast(list[dict[str, Any]], chunk):
                        all_columns += [
                            column for column in record if column not in all_columns
                        ]

            first = False

            result = self.insert_chunk(
                alter,
                extracts,
                chunk,
                all_columns,
                hash_id,
                hash_id_columns,
                upsert,
                pk,
                not_null,
                conversions,
                num_records_processed,
                replace,
                ignore,
                list_mode,
            )

        # If we only handled a single row populate self.last_pk
        if num_records_processed == 1:
            # For an insert we need to use result.lastrowid
            if not upsert and result is not None:
                ignored_insert = ignore and result.rowcount == 0
                if ignored_insert:
                    # The row was not inserted because it conflicts with an
                    # existing row. Point last_pk / last_rowid at that existing
                    # row when we can identify it from the record's primary key
                    # values, rather than leaving them stale or unset.
                    if list_mode:
                        first_record_dict = dict(
                            zip(column_names, cast(Sequence[Any], first_record))
                        )
                    else:
                        first_record_dict = cast(dict[str, Any], first_record)
                    if hash_id:
                        self.last_pk = hash_record(first_record_dict, hash_id_columns)
                    elif isinstance(pk, str):
                        self.last_pk = first_record_dict[
                            resolve_casing(pk, first_record_dict)
                        ]
                    elif pk:
                        self.last_pk = tuple(
                            first_record_dict[resolve_casing(p, first_record_dict)]
                            for p in pk
                        )
                    # Locate the existing conflicting row using its primary key
                    # columns so we can report its rowid (and pk if not already
                    # known). Falls back to leaving them unset if the conflict
                    # cannot be resolved to a pk lookup (e.g. a UNIQUE column).
                    key_cols: list[str] | None = None
                    if isinstance(pk, str):
                        key_cols = [pk]
                    elif pk:
                        key_cols = list(pk)
                    elif not hash_id and not self.use_rowid:
                        key_cols = self.pks
                    if key_cols:
                        try:
                            key_values = [
                                first_record_dict[resolve_casing(c, first_record_dict)]
                                for c in key_cols
                            ]
                        except KeyError:
                            key_values = None
                        if key_values is not None:
                            where = " and ".join(
                                f"{quote_identifier(c)} = ?" for c in key_cols
                            )
                            existing = self.db.execute(
                                f"select rowid from {quote_identifier(self.name)} where {where} limit 1",
                                key_values,
                            ).fetchone()
                            if existing is not None:
                                self.last_rowid = existing[0]
                                # On a primary key conflict the record's pk
                                # values identify the existing row
                                if self.last_pk is None:
                                    self.last_pk = (
                                        key_values[0]
                                        if len(key_cols) == 1
                                        else tuple(key_values)
                                    )
                else:
                    self.last_rowid = result.lastrowid
                    # A rowid-alias pk resolves directly to the rowid, so there
                    # is no separate pk column to look up
                    rowid_pk = isinstance(pk, str) and pk.lower() in ROWID_ALIASES
                    if (hash_id or (pk and not rowid_pk)) and self.last_rowid:
                        # Set self.last_pk to the pk(s) for that rowid
                        row = next(
                            iter(self.rows_where("rowid = ?", [self.last_rowid]))
                        )
                        if hash_id:
                            self.last_pk = row[hash_id]
                        elif isinstance(pk, str):
                            self.last_pk = row[resolve_casing(pk, row)]
                        else:
                            assert pk is not None
                            self.last_pk = tuple(
                                row[resolve_casing(p, row)] for p in pk
                            )
                    else:
                        self.last_pk = self.last_rowid
            else:
                # For an upsert use first_record from earlier
                if list_mode:
                    # In list mode, look up pk value by column index
                    first_record_list = cast(Sequence[Any], first_record)
                    if hash_id:
                        # hash_id not supported in list mode for last_pk
                        pass
                    elif isinstance(pk, str):
                        pk_index = column_names.index(resolve_casing(pk, column_names))
                        self.last_pk = first_record_list[pk_index]
                    else:
                        assert pk is not None
                        self.last_pk = tuple(
                            first_record_list[
                                column_names.index(resolve_casing(p, column_names))
                            ]
                            for p in pk
                        )
                else:
                    first_record_dict = cast(dict[str, Any], first_record)
                    if hash_id:
                        self.last_pk = hash_record(first_record_dict, hash_id_columns)
                    else:
                        assert pk is not None
                        self.last_pk = (
                            first_record_dict[resolve_casing(pk, first_record_dict)]
                            if isinstance(pk, str)
                            else tuple(
                                first_record_dict[resolve_casing(p, first_record_dict)]
                                for p in pk
                            )
                        )

        if analyze:
            self.analyze()

        return self

    def upsert(
        self,
        record: dict[str, Any],
        pk: PrimaryKey | Default | None = DEFAULT,
        foreign_keys: ForeignKeysType | Default | None = DEFAULT,
        column_order: list[str] | Default | None = DEFAULT,
        not_null: Iterable[str] | Default | None = DEFAULT,
        defaults: dict[str, Any] | Default | None = DEFAULT,
        hash_id: str | Default | None = DEFAULT,
        hash_id_columns: Iterable[str] | Default | None = DEFAULT,
        alter: bool | Default | None = DEFAULT,
        extracts: dict[str, str] | list[str] | Default | None = DEFAULT,
        conversions: dict[str, str] | Default | None = DEFAULT,
        columns: dict[str, Any] | Default | None = DEFAULT,
        strict: bool | Default | None = DEFAULT,
    ) -> "Table":
        """
        Like ``.insert()`` but performs an ``UPSERT``, where records are inserted if they do
        not exist and updated if they DO exist, based on matching against their primary key.

        See :ref:`python_api_upsert`.
        """
        return self.upsert_all(
            [record],
            pk=pk,
            foreign_keys=foreign_keys,
            column_order=column_order,
            not_null=not_null,
            defaults=defaults,
            hash_id=hash_id,
            hash_id_columns=hash_id_columns,
            alter=alter,
            extracts=extracts,
            conversions=conversions,
            columns=columns,
            strict=strict,
        )

    def upsert_all(
        self,
        records: Iterable[dict[str, Any]] | Iterable[Sequence[Any]],
        pk: PrimaryKey | Default | None = DEFAULT,
        foreign_keys: ForeignKeysType | Default | None = DEFAULT,
        column_order: list[str] | Default | None = DEFAULT,
        not_null: Iterable[str] | Default | None = DEFAULT,
        defaults: dict[str, Any] | Default | None = DEFAULT,
        batch_size: int | Default = DEFAULT,
        hash_id: str | Default | None = DEFAULT,
        hash_id_columns: Iterable[str] | Default | None = DEFAULT,
        alter: bool | Default | None = DEFAULT,
        extracts: dict[str, str] | list[str] | Default | None = DEFAULT,
        conversions: dict[str, str] | Default | None = DEFAULT,
        columns: dict[str, Any] | Default | None = DEFAULT,
        analyze: bool = False,
        strict: bool | Default | None = DEFAULT,
    ) -> "Table":
        """
        Like ``.upsert()`` but can be applied to a list of records.
        """
        return self.insert_all(
            records,
            pk=pk,
            foreign_keys=foreign_keys,
            column_order=column_order,
            not_null=not_null,
            defaults=defaults,
            batch_size=batch_size,
            hash_id=hash_id,
            hash_id_columns=hash_id_columns,
            alter=alter,
            extracts=extracts,
            conversions=conversions,
            columns=columns,
            upsert=True,
            analyze=analyze,
            strict=strict,
        )

    def lookup(
        self,
        lookup_values: dict[str, Any],
        extra_values: dict[str, Any] | None = None,
        pk: str | None = "id",
        foreign_keys: ForeignKeysType | None = None,
        column_order: list[str] | None = None,
        not_null: Iterable[str] | None = None,
        defaults: dict[str, Any] | None = None,
        extracts: dict[str, str] | list[str] | None = None,
        conversions: dict[str, str] | None = None,
        columns: dict[str, Any] | None = None,
        strict: bool | None = False,
    ):
        """
        Create or populate a lookup table with the specified values.

        ``db["Species"].lookup({"name": "Palm"})`` will create a table called ``Species``
        (if one does not already exist) with two columns: ``id`` and ``name``. It will
        set up a unique constraint on the ``name`` column to guarantee it will not
        contain duplicate rows.

        It will then insert a new row with the ``name`` set to ``Palm`` and return the
        new integer primary key value.

        An optional second argument can be provided with more ``name: value`` pairs to
        be included only if the record is being created for the first time. These will
        be ignored on subsequent lookup calls for records that already exist.

        All other keyword arguments are passed through to ``.insert()``.

        See :ref:`python_api_lookup_tables` for more details.

        :param lookup_values: Dictionary specifying column names and values to use for the lookup
        :param extra_values: Additional column values to be used only if creating a new record
        :param strict: Boolean, apply STRICT mode if creating the table.
        """
        if not isinstance(lookup_values, dict):
            raise ValueError("lookup_values must be a dictionary")  # noqa: TRY004
        if pk is None:
            raise ValueError("pk cannot be None")
        if extra_values is not None and not isinstance(extra_values, dict):
            raise ValueError("extra_values must be a dictionary")
        combined_values = dict(lookup_values)
        if extra_values is not None:
            combined_values.update(extra_values)
        if self.exists():
            self.add_missing_columns([combined_values])
            unique_column_sets = [
                {fold_identifier_case(c) for c in i.columns} for i in self.indexes
            ]
            if {
                fold_identifier_case(c) for c in lookup_values
            } not in unique_column_sets:
                self.create_index(lookup_values.keys(), unique=True)
            # IS rather than = so that null values are matched correctly
            wheres = [f"{quote_identifier(column)} IS ?" for column in lookup_values]
            rows = list(
                self.rows_where(
                    " and ".join(wheres), [value for _, value in lookup_values.items()]
                )
            )
            try:
                return rows[0][resolve_casing(pk, rows[0])]
            except IndexError:
                return self.insert(
                    combined_values,
                    pk=pk,
                    foreign_keys=foreign_keys,
                    column_order=column_order,
                    not_null=not_null,
                    defaults=defaults,
                    extracts=extracts,
                    conversions=conversions,
                    columns=columns,
                    strict=strict,
                ).last_pk
        else:
            pk = self.insert(
                combined_values,
                pk=pk,
                foreign_keys=foreign_keys,
                column_order=column_order,
                not_null=not_null,
                defaults=defaults,
                extracts=extracts,
                conversions=conversions,
                columns=columns,
                strict=strict,
            ).last_pk
            self.create_index(lookup_values.keys(), unique=True)
            return pk

    def m2m(
        self,
        other_table: Union[str, "Table"],
        record_or_iterable: Iterable[dict[str, Any]] | dict[str, Any] | None = None,
        pk: Any | Default | None = DEFAULT,
        lookup: dict[str, Any] | None = None,
        m2m_table: str | None = None,
        alter: bool = False,
    ):
        """
        After inserting a record in a table, create one or more records in some other
        table and then create many-to-many records linking the original record and the
        newly created records together.

        For example::

            db["dogs"].insert({"id": 1, "name": "Cleo"}, pk="id").m2m(
                "humans", {"id": 1, "name": "Natalie"}, pk="id"
            )

        See :ref:`python_api_m2m` for details.

        :param other_table: The name of the table to insert the new records into.
        :param record_or_iterable: A single dictionary record to insert, or a list of records.
        :param pk: The primary key to use if creating ``other_table``.
        :param lookup: Same dictionary as for ``.lookup()``, to create a many-to-many lookup table.
        :param m2m_table: The string name to use for the many-to-many table, defaults to creating
          this automatically based on the names of the two tables.
        :param alter: Set to ``True`` to add any missing columns on ``other_table`` if that table
          already exists.
        """
        if isinstance(other_table, str):
            other_table = self.db.table(other_table, pk=pk)
        our_id = self.last_pk
        if lookup is not None:
            if record_or_iterable is not None:
                raise ValueError("Provide lookup= or record, not both")
        elif record_or_iterable is None:
            raise ValueError("Provide lookup= or record, not both")
        tables = sorted([self.name, other_table.name])
        columns = [f"{t}_id" for t in tables]
        if m2m_table is not None:
            m2m_table_name = m2m_table
        else:
            # Detect if there is a single, unambiguous option
            candidates = self.db.m2m_table_candidates(self.name, other_table.name)
            if len(candidates) == 1:
                m2m_table_name = candidates[0]
            elif len(candidates) > 1:
                raise NoObviousTable(
                    f"No single obvious m2m table for {self.name}, {other_table.name} - use m2m_table= parameter"
                )
            else:
                # If not, create a new table
                m2m_table_name = m2m_table or "{}_{}".format(*tables)
        m2m_table_obj = self.db.table(m2m_table_name, pk=columns, foreign_keys=columns)
        if lookup is None:
            # if records is only one record, put the record in a list
            if isinstance(record_or_iterable, Mapping):
                records = [record_or_iterable]
            else:
                records = cast(list, record_or_iterable)
            # Ensure each record exists in other table
            for record in records:
                id = other_table.insert(
                    cast(dict, record), pk=pk, replace=True, alter=alter
                ).last_pk
                m2m_table_obj.insert(
                    {
                        f"{other_table.name}_id": id,
                        f"{self.name}_id": our_id,
                    },
                    replace=True,
                )
        else:
            id = other_table.lookup(lookup)
            m2m_table_obj.insert(
                {
                    f"{other_table.name}_id": id,
                    f"{self.name}_id": our_id,
                },
                replace=True,
            )
        return self
