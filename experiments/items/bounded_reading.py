"""An uploaded bank read with its bounds counted as it is read (issue 34 item 4). No Django here.

The red team's files on main: a 48 KB Parquet file of 1,000 cells of 1 MB each (one value, kept once in
the file's dictionary) peaked at 2,985 MB; 6.5 million `{}` JSON lines (19.5 MB) peaked at 1,676 MB
before the row limit refused them; JSON nested 100,000 deep raised RecursionError (a 500). Here:

- JSON is streamed (ijson, events): records are counted as they are read and the file is refused at
  record MAX_ROWS + 1; a value nesting deeper than MAX_DEPTH, an object of more than MAX_COLUMNS keys,
  a list cell of more than MAX_LIST values or a text past MAX_CELL_CHARS is refused where it stands,
  and the cells read are counted against MAX_CELLS. No recursion follows the file's nesting.
- JSON lines: one line at a time, each read as above; the rest of the file is not read past the limit.
- Parquet: the footer's metadata first (rows, columns, each column's type, the decoded size the
  column chunks declare: MAX_PARQUET_BYTES), then one row group at a time with text columns kept
  dictionary-encoded, so a value repeated a thousand times is held once; each text cell's length
  (MAX_CELL_CHARS, in bytes) and the row group's expanded text (MAX_PARQUET_BYTES over the file) are
  computed from the lengths before any value becomes a Python string.
- CSV is read by logic/csv_table.py (a line at a time; Python's csv field limit, 131,072 characters,
  is MAX_CELL_CHARS); the table's cells are counted here against MAX_CELLS.

Every refusal is a BankError (a ValueError whose `problems` are the lines to show), raised before
anything is written.
"""
from __future__ import annotations

import io
from collections.abc import Iterator, Sequence

from logic.csv_table import MAX_COLUMNS, MAX_ROWS

MAX_CELL_CHARS = 131_072  # a cell's text: Python csv's field limit, and the same for JSON and Parquet (bytes)
MAX_DEPTH = 16  # JSON nesting: a list of records of cells of lists is 3 deep
MAX_LIST = 500  # values in one list cell (premises)
MAX_CELLS = 1_000_000  # cells of one file (rows × their columns, a list's values each a cell)
MAX_PARQUET_BYTES = 64 * 2**20  # a Parquet file's text once decoded (declared, then counted)


class BankError(ValueError):
    """A file that cannot be read, or a mapping that cannot be applied: every problem, one a line."""

    def __init__(self, problems: Sequence[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


def too_many_rows() -> BankError:
    return BankError([f"the file has more than {MAX_ROWS:,} records; split it into files of at most {MAX_ROWS:,} "
                      "(nothing after that record was read)"])


class Cells:
    """The cells read so far, against MAX_CELLS."""

    def __init__(self) -> None:
        self.count = 0

    def add(self, n: int) -> None:
        self.count += n
        if self.count > MAX_CELLS:
            raise BankError([f"the file has more than {MAX_CELLS:,} cells (records × columns); split it"])


# --- JSON -----------------------------------------------------------------------------------------------

_SCALARS = {"null", "boolean", "integer", "double", "number", "string"}


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _value(event: str, value, events: Iterator, depth: int, where: str):
    """One JSON value whose first event is (event, value), built within the bounds; a loop per level,
    and the levels themselves at most MAX_DEPTH."""
    if event in _SCALARS:
        if event == "string" and len(value) > MAX_CELL_CHARS:
            raise BankError([f"{where}: a text of {len(value):,} characters; a cell holds at most {MAX_CELL_CHARS:,}"])
        return value
    if depth >= MAX_DEPTH:
        raise BankError([f"{where}: the JSON nests more than {MAX_DEPTH} levels deep; a bank's records are "
                         "objects of text, numbers and lists of text"])
    if event == "start_array":
        out = []
        for event, value in events:
            if event == "end_array":
                return out
            if len(out) >= MAX_LIST:
                raise BankError([f"{where}: a list of more than {MAX_LIST} values"])
            out.append(_value(event, value, events, depth + 1, where))
    elif event == "start_map":
        out = {}
        for event, value in events:
            if event == "end_map":
                return out
            if len(out) >= MAX_COLUMNS:
                raise BankError([f"{where}: an object of more than {MAX_COLUMNS} keys; at most {MAX_COLUMNS} "
                                 "columns are read"])
            if len(value) > 200:
                raise BankError([f"{where}: a key of {len(value):,} characters (a column name)"])
            event, inner = next(events)
            out[value] = _value(event, inner, events, depth + 1, f"{where}, column '{value}'")
    raise BankError([f"{where}: the JSON ends inside a value"])


def _cells(value) -> int:
    if isinstance(value, dict):
        return sum(len(v) if isinstance(v, list) else 1 for v in value.values())
    return 1


def _events(data: bytes):
    import ijson

    return ijson.basic_parse(io.BytesIO(data[3:] if data.startswith(b"\xef\xbb\xbf") else data), use_float=True)


def json_records(data: bytes) -> list:
    """The records of a JSON file: its top-level list's, or those of the one list inside its
    top-level object ({"data": [...]}). BankError past a bound, or for a file that is not JSON."""
    import ijson

    records: list = []
    cells = Cells()
    events = _events(data)
    try:
        event, value = next(events, (None, None))
        if event == "start_map":
            found = False
            for event, value in events:
                if event == "end_map":
                    break
                event, inner = next(events)
                if event == "start_array":
                    if found:
                        raise BankError(["the JSON object holds more than one list; give the records as one list "
                                         "([{\"column\": value, …}, …]) or as JSON lines"])
                    found = True
                    _list_records(events, records, cells)
                else:
                    _value(event, inner, events, 1, f"the value of '{value}'")
            if not found:
                raise BankError(["the JSON file must hold a list of objects ([{\"column\": value, …}, …]) or be JSON "
                                 "lines"])
        elif event == "start_array":
            _list_records(events, records, cells)
        elif event is not None:
            raise BankError(["the JSON file must hold a list of objects ([{\"column\": value, …}, …]) or be JSON lines"])
        for _ in events:  # the parser checks that nothing follows
            pass
    except (ijson.JSONError, UnicodeDecodeError) as exc:
        after = f" (after record {len(records):,})" if records else ""
        raise BankError([f"the file cannot be read as JSON{after}: {_first_line(exc)}"]) from None
    return records


def json_document(data: bytes):
    """A JSON file read within the same bounds: its top-level list streamed as records (counted), any
    other value built as it is (a published reader then says what it expected). BankError past a
    bound; ijson.JSONError (or StopIteration, for no value at all) for text that is not JSON."""
    records: list = []
    events = _events(data)
    event, value = next(events)
    if event != "start_array":
        document = _value(event, value, events, 0, "the file")
    else:
        _list_records(events, records, Cells())
        document = records
    for _ in events:
        pass
    return document


def _list_records(events, records: list, cells: Cells) -> None:
    for event, value in events:
        if event == "end_array":
            return
        if len(records) >= MAX_ROWS:
            raise too_many_rows()
        record = _value(event, value, events, 2, f"record {len(records) + 1}")
        cells.add(_cells(record))
        records.append(record)


def jsonl_records(data: bytes) -> tuple[list, list[str]]:
    """(records, labels) of a JSON lines file, one line at a time; BankError past a bound, or listing
    the lines that are not JSON (at most 50)."""
    import ijson

    stream = io.BytesIO(data[3:] if data.startswith(b"\xef\xbb\xbf") else data)
    records, labels, problems = [], [], []
    cells = Cells()
    for number, line in enumerate(iter(stream.readline, b""), start=1):
        if not line.strip():
            continue
        if len(records) >= MAX_ROWS:
            raise too_many_rows()
        where = f"record {len(records) + 1} (line {number})"
        try:
            events = ijson.basic_parse(io.BytesIO(line), use_float=True)
            event, value = next(events)
            record = _value(event, value, events, 1, where)
            for _ in events:
                pass
        except (ijson.JSONError, UnicodeDecodeError, StopIteration) as exc:
            problems.append(f"line {number}: not JSON ({_first_line(exc)})")
            if len(problems) >= 50:
                break
            continue
        cells.add(_cells(record))
        records.append(record)
        labels.append(where)
    if problems:
        raise BankError(problems)
    return records, labels


# --- Parquet --------------------------------------------------------------------------------------------

def _kind(arrow_type) -> str:
    """'text', 'scalar', 'list' (of text or scalars) or '' (refused) for a column's Arrow type."""
    import pyarrow.types as t

    if t.is_string(arrow_type) or t.is_large_string(arrow_type) or t.is_binary(arrow_type) \
            or t.is_large_binary(arrow_type) or t.is_dictionary(arrow_type):
        return "text"
    if t.is_boolean(arrow_type) or t.is_integer(arrow_type) or t.is_floating(arrow_type) or t.is_null(arrow_type):
        return "scalar"
    if (t.is_list(arrow_type) or t.is_large_list(arrow_type)) and _kind(arrow_type.value_type) in ("text", "scalar"):
        return "list"
    return ""


def _lengths(column):
    """The byte length of every text cell of a column (a list column: of every value in its lists), as
    an Arrow array, computed without making any value a Python string."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunks = []
    for chunk in (column.chunks if isinstance(column, pa.ChunkedArray) else [column]):
        if pa.types.is_list(chunk.type) or pa.types.is_large_list(chunk.type):
            chunk = pc.list_flatten(chunk)
        if pa.types.is_dictionary(chunk.type):
            sizes = pc.binary_length(chunk.dictionary) if _kind(chunk.dictionary.type) == "text" else None
            chunks.append(pc.take(sizes, chunk.indices) if sizes is not None else pa.array([], pa.int64()))
        elif _kind(chunk.type) == "text":
            chunks.append(pc.binary_length(chunk))
    return chunks


def parquet_records(data: bytes) -> tuple[tuple[str, ...], list]:
    """(columns, records) of a Parquet file, refused from its metadata before anything is decoded, then
    one row group at a time before any cell becomes a Python value (see the module's docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(pa.BufferReader(data), thrift_string_size_limit=MAX_PARQUET_BYTES,
                                thrift_container_size_limit=100_000)
        meta, schema = handle.metadata, handle.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise BankError([f"the file cannot be read as Parquet: {_first_line(exc)}"]) from None
    if meta.num_rows > MAX_ROWS:
        raise BankError([f"the file has {meta.num_rows:,} records; split it into files of at most {MAX_ROWS:,}"])
    if len(schema) > MAX_COLUMNS or meta.num_columns > MAX_COLUMNS:
        raise BankError([f"the file has {max(len(schema), meta.num_columns):,} columns; at most {MAX_COLUMNS} are "
                         "read"])
    kinds = {f.name: _kind(f.type) for f in schema}
    refused = [f"column '{f.name}': holds {f.type}; a column's cells must be text, numbers or (for premises) lists "
               "of text" for f in schema if not kinds[f.name]]
    if refused:
        raise BankError(refused)
    declared = sum(meta.row_group(g).column(c).total_uncompressed_size
                   for g in range(meta.num_row_groups) for c in range(meta.row_group(g).num_columns))
    if declared > MAX_PARQUET_BYTES:
        raise BankError([f"the file's columns hold {declared / 2**20:,.0f} MB once decompressed; at most "
                         f"{MAX_PARQUET_BYTES // 2**20} MB are read: split it"])
    Cells().add(meta.num_rows * len(schema))
    text = [f.name for f in schema if kinds[f.name] == "text"]
    try:  # text columns stay dictionary-encoded (a repeated value is held once) until counted
        handle = pq.ParquetFile(pa.BufferReader(data), read_dictionary=text, thrift_string_size_limit=MAX_PARQUET_BYTES,
                                thrift_container_size_limit=100_000)
        records: list = []
        total = 0
        for group in range(meta.num_row_groups):
            table = handle.read_row_group(group)
            for name in table.column_names:
                for sizes in _lengths(table.column(name)):
                    if not len(sizes):
                        continue
                    longest = pc.max(sizes).as_py() or 0
                    if longest > MAX_CELL_CHARS:
                        first = pc.indices_nonzero(pc.greater(sizes, MAX_CELL_CHARS))[0].as_py()
                        where = (f"record {len(records) + first + 1}" if kinds[name] == "text" else "a record")
                        raise BankError([f"{where}, column '{name}': a text of {longest:,} bytes; a cell holds at "
                                         f"most {MAX_CELL_CHARS:,}"])
                    total += pc.sum(sizes).as_py() or 0
            if total > MAX_PARQUET_BYTES:
                raise BankError([f"the file's text is more than {MAX_PARQUET_BYTES // 2**20} MB once decoded (by "
                                 f"record {len(records) + table.num_rows:,}); split it"])
            records.extend(table.to_pylist())
            del table
    except (pa.ArrowException, OSError) as exc:
        raise BankError([f"the file cannot be read as Parquet: {_first_line(exc)}"]) from None
    return tuple(schema.names), records
