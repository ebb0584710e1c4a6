"""Where logs and samples live: a local folder, or object storage named by a URI.

A location is a local ``Path`` or a URI string: ``s3://bucket/prefix`` (S3 and S3-compatible
stores), any other scheme pyarrow knows (``gs://``, ``hdfs://``, ``abfs://``), else any scheme
fsspec knows (``memory://``, ``az://`` … with fsspec and its package installed).

Credentials never come from the config: pyarrow's S3 client reads ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN`` and ``AWS_REGION`` (or ~/.aws, or the instance
role), and feco reads the endpoint of an S3-compatible store from ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (pyarrow itself does not). In Airflow the DAG sets these from a connection.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from collections.abc import Callable
from contextlib import suppress
from datetime import date
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from feco.errors import DataError, UsageError

Location = Path | str
# pyarrow's S3 client out of reach: refused, unresolved or timed out; curl's reason follows the code.
_UNREACHABLE = re.compile(r"AWS Error NETWORK_CONNECTION.*?curlCode: \d+, ([^;]+)")


def is_uri(location: Location) -> bool:
    return isinstance(location, str) and "://" in location


def filesystem_for(location: Location) -> tuple[pafs.FileSystem, str]:
    """The filesystem that holds ``location`` and the path to give it.

    Examples
    --------
    >>> fs, path = filesystem_for("/srv/search_logs")
    >>> fs.type_name, path
    ('local', '/srv/search_logs')
    """
    text = str(location)
    scheme, uri, rest = text.partition("://")
    if not uri:
        return pafs.LocalFileSystem(), text
    if scheme in ("s3", "s3a"):  # built here: from_uri asks AWS for the bucket's region
        return _s3(), rest.rstrip("/")
    if scheme == "file":
        return pafs.LocalFileSystem(), rest
    try:
        return pafs.FileSystem.from_uri(text)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _fsspec(scheme, text)


def _s3() -> pafs.S3FileSystem:
    endpoint = _endpoint()
    if not endpoint:
        return pafs.S3FileSystem()
    scheme, _, host = endpoint.partition("://")
    return pafs.S3FileSystem(endpoint_override=host or scheme, scheme=scheme if host else "https")


def _endpoint() -> str | None:
    return os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")


def _fsspec(scheme: str, text: str) -> tuple[pafs.FileSystem, str]:
    try:
        import fsspec

        fs, path = fsspec.core.url_to_fs(text)
    except (ImportError, ValueError) as error:
        raise UsageError(f"no filesystem for '{scheme}://' ({text}): {error}") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def credentials_environment(*, login: str | None, password: str | None, extra: dict) -> dict[str, str]:
    """The ``AWS_*`` variables for an object store's connection, as an Airflow ``aws``
    connection holds it: login = access key id, password = secret key, extra ``endpoint_url``,
    ``region_name`` and ``aws_session_token``.

    Examples
    --------
    >>> credentials_environment(login="AKIA", password="s3cr3t", extra={"endpoint_url": "http://minio:9000"})
    {'AWS_ACCESS_KEY_ID': 'AKIA', 'AWS_SECRET_ACCESS_KEY': 's3cr3t', 'AWS_ENDPOINT_URL': 'http://minio:9000'}
    """
    variables = {"AWS_ACCESS_KEY_ID": login, "AWS_SECRET_ACCESS_KEY": password,
                 "AWS_SESSION_TOKEN": extra.get("aws_session_token"),
                 "AWS_ENDPOINT_URL": extra.get("endpoint_url"), "AWS_REGION": extra.get("region_name")}
    return {name: value for name, value in variables.items() if value}


def join(location: Location, *parts: str) -> Location:
    """``location`` with ``parts`` appended, of the same kind (Path or URI)."""
    if isinstance(location, Path):
        return location.joinpath(*parts)
    return "/".join([str(location).rstrip("/"), *parts])


def partition_dir(root: Location, ds: date) -> Location:
    """The day's folder under a logs or samples root: ``ds=YYYY-MM-DD`` (the logs' folder
    layout and the samples' share it)."""
    return join(root, f"ds={ds.isoformat()}")


def location_of(root: Location, root_path: str, path: str) -> Location:
    """A file's ``path`` of the filesystem that holds ``root`` (whose own path there is
    ``root_path``), named as ``root`` is: with its scheme and host, as the config gives it.

    Examples
    --------
    >>> location_of("s3://lake/events", "lake/events", "lake/events/ds=2026-01-05/hour=04/part-0.parquet")
    's3://lake/events/ds=2026-01-05/hour=04/part-0.parquet'
    """
    return join(root, path.removeprefix(root_path.rstrip("/") + "/"))


def exists(location: Location) -> bool:
    fs, path = filesystem_for(location)
    return fs.get_file_info(path).type != pafs.FileType.NotFound


def is_dir(location: Location) -> bool:
    fs, path = filesystem_for(location)
    return fs.get_file_info(path).type == pafs.FileType.Directory


def files_under(location: Location, *, suffix: str = ".parquet") -> list[str]:
    """Every file below ``location`` ending in ``suffix``, as paths of its filesystem, sorted.
    Hidden and temporary files and folders (``.name``, ``_name``, such as ``_temporary/`` or
    ``.part-0.parquet.crc``) are left out, as Spark and Hive leave them out."""
    fs, path = filesystem_for(location)
    root = path.rstrip("/") + "/"
    selector = pafs.FileSelector(path, recursive=True, allow_not_found=True)
    found = [info.path for info in fs.get_file_info(selector)
             if info.type == pafs.FileType.File and info.base_name.endswith(suffix)
             and not any(part.startswith((".", "_")) for part in info.path.removeprefix(root).split("/"))]
    return sorted(found)


def digest(location: Location) -> str:
    """The sha256 of the files :func:`files_under` finds below ``location``: their names below
    it and their bytes, in order."""
    fs, path = filesystem_for(location)
    hashed = hashlib.sha256()
    for file in files_under(location):
        hashed.update(file.removeprefix(path.rstrip("/")).encode())
        with fs.open_input_stream(file) as stream:
            while chunk := stream.read(1 << 20):
                hashed.update(chunk)
    return hashed.hexdigest()


def remove(location: Location) -> None:
    """Delete a file or a folder with everything in it; nothing there is fine."""
    fs, path = filesystem_for(location)
    kind = fs.get_file_info(path).type
    if kind == pafs.FileType.Directory:
        fs.delete_dir(path)
    elif kind == pafs.FileType.File:
        fs.delete_file(path)


def read_parquet(location: Location) -> pl.DataFrame:
    return pl.from_arrow(read_table(location))


def read_table(location: Location) -> pa.Table:
    """A Parquet file whole, with its schema's metadata."""
    fs, path = filesystem_for(location)
    try:
        return pq.read_table(path, filesystem=fs)
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"cannot read {location}: {error}") from None


def write_parquet(frame: pl.DataFrame | pa.Table, location: Location, *, compression: str | dict = "snappy") -> None:
    """Write a Parquet file whole (see :func:`_write_whole`). ``compression`` as
    ``pyarrow.parquet.write_table`` takes it (one codec, or one per column)."""
    table = frame.to_arrow() if isinstance(frame, pl.DataFrame) else frame
    _write_whole(location, lambda fs, path: pq.write_table(table, path, filesystem=fs, compression=compression))


def read_text(location: Location) -> str | None:
    """A small text file's content; None when there is none."""
    fs, path = filesystem_for(location)
    try:
        with fs.open_input_stream(path) as stream:
            return stream.read().decode("utf-8")
    except FileNotFoundError:
        return None


def write_text(location: Location, text: str) -> None:
    """Write a small text file whole (see :func:`_write_whole`)."""
    def put(fs: pafs.FileSystem, path: str) -> None:
        with fs.open_output_stream(path) as stream:
            stream.write(text.encode("utf-8"))

    _write_whole(location, put)


def _write_whole(location: Location, write: Callable[[pafs.FileSystem, str], None]) -> None:
    """``write(fs, path)`` the file at ``location`` whole: through a temporary name and a rename
    where the filesystem has one (an object store's single PUT is already all or nothing), so
    a failure (a full disk) leaves the previous file as it was.

    A failure names ``location``: pyarrow's error names no file when a write fails (a full disk)."""
    fs, path = filesystem_for(location)
    try:
        parent = path.rpartition("/")[0]
        if parent:
            fs.create_dir(parent, recursive=True)
        if fs.type_name == "s3":
            write(fs, path)
        else:
            _write_renamed(fs, path, write)
    except OSError as error:
        if error.errno is None:  # an object store's, which names the bucket and the key
            raise
        raise OSError(error.errno, os.strerror(error.errno), str(location)) from None


def _write_renamed(fs: pafs.FileSystem, path: str, write: Callable[[pafs.FileSystem, str], None]) -> None:
    temporary = f"{path}.{uuid.uuid4().hex}.tmp"
    try:
        write(fs, temporary)
        fs.move(temporary, path)
    except BaseException:
        with suppress(OSError):  # never created, or the filesystem refuses even this
            fs.delete_file(temporary)
        raise


def describe_failure(error: OSError) -> str:
    """A failed file operation in a line: the path and the cause; for an object store out of
    reach, its endpoint and what to check (never its credentials).

    Examples
    --------
    >>> describe_failure(OSError(28, "No space left on device", "/srv/samples/_windows.parquet"))
    '/srv/samples/_windows.parquet: No space left on device'
    """
    unreachable = _UNREACHABLE.search(str(error))
    if unreachable:
        return (f"cannot reach the object store at {_endpoint() or 'the AWS default endpoint'} "
                f"({unreachable.group(1).lower()}): check that it is up and that AWS_ENDPOINT_URL_S3 "
                "or AWS_ENDPOINT_URL names it (scheme, host and port)")
    if error.filename is None:
        return str(error)  # pyarrow's, which names the path in its text
    paths = " -> ".join(str(name) for name in (error.filename, error.filename2) if name is not None)
    return f"{paths}: {error.strerror}"


def copy_tree(source: Location, target: Location, *, last: str) -> None:
    """Copy every file below ``source`` to the same place below ``target``, the file named
    ``last`` after all the others (an object store's copy is server side)."""
    fs, source_path = filesystem_for(source)
    _, target_path = filesystem_for(target)
    found = fs.get_file_info(pafs.FileSelector(source_path, recursive=True))
    files = sorted((info.path for info in found if info.type == pafs.FileType.File),
                   key=lambda path: path.rpartition("/")[2] == last)
    for path in files:
        copied = target_path.rstrip("/") + "/" + path.removeprefix(source_path.rstrip("/") + "/")
        fs.create_dir(copied.rpartition("/")[0], recursive=True)
        fs.copy_file(path, copied)
