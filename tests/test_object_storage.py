"""Logs and samples in object storage: a day run from a local S3-compatible server (moto's
server mode on 127.0.0.1) gives the states of the same logs on local disk."""

from datetime import UTC, date

import polars as pl
import pytest

from feco import storage, tasks
from feco.errors import DataError
from feco.sampling.day_folder import recover_samples
from feco.warehouse import open_read_only
from logbuilder import make_config, make_events, write_logs

moto_server = pytest.importorskip("moto.server", reason="moto[server] (the test extra) is not installed")
pafs = pytest.importorskip("pyarrow.fs")

DAY = date(2026, 3, 2)
STATE_KEY = ["window_index", "feature", "segment_dim", "segment_value"]


@pytest.fixture(scope="module")
def s3_endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_endpoint, monkeypatch, tmp_path):
    """A fresh bucket; credentials and endpoint only in the environment, as in production."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_endpoint)
    name = f"logs-{tmp_path.name.lower().replace('_', '-')[-40:]}"
    pafs.S3FileSystem(endpoint_override=s3_endpoint, scheme="http", allow_bucket_creation=True).create_dir(name)
    return name


def _states(config) -> pl.DataFrame:
    with open_read_only(config.paths.warehouse) as conn:
        return conn.sql("SELECT * EXCLUDE (ds) FROM coverage_states").pl().sort(STATE_KEY)


def test_a_day_run_from_s3_equals_the_same_logs_on_local_disk(tmp_path, bucket):
    local = make_config(tmp_path / "local")
    write_logs(local.paths.logs, make_events(DAY, events=3000, seed=4))
    fs, root = storage.filesystem_for(f"s3://{bucket}/search_logs")
    pafs.copy_files(str(local.paths.logs), root, destination_filesystem=fs)
    remote = make_config(tmp_path / "remote", paths={
        "logs": f"s3://{bucket}/search_logs", "samples": f"s3://{bucket}/feco/samples", "warehouse": "feco.duckdb"})

    tasks.run_day(DAY, local, deliver=False)
    tasks.run_day(DAY, remote, deliver=False)

    assert _states(remote).equals(_states(local))
    samples = storage.files_under(f"s3://{bucket}/feco/samples/ds={DAY}")
    assert sum("/window=" in f for f in samples) == 8
    tasks.run_day(DAY, remote, deliver=False)  # a second run of the day replaces it whole
    assert storage.files_under(f"s3://{bucket}/feco/samples/ds={DAY}") == samples
    assert _states(remote).equals(_states(local))


def test_a_missing_day_in_a_bucket_is_one_clear_error(tmp_path, bucket):
    config = make_config(tmp_path, paths={"logs": f"s3://{bucket}/nothing", "samples": f"s3://{bucket}/s",
                                          "warehouse": "feco.duckdb"})
    with pytest.raises(DataError, match=f"no log partition for {DAY}: s3://{bucket}/nothing/ds={DAY}"):
        tasks.sample(DAY, config)


def test_filesystem_for_names_the_store_and_the_path(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    fs, path = storage.filesystem_for("s3://bucket/logs/")
    assert (fs.type_name, path) == ("s3", "bucket/logs")
    fs, path = storage.filesystem_for("/data/logs")
    assert (fs.type_name, path) == ("local", "/data/logs")


def test_any_fsspec_filesystem_holds_logs_and_samples(tmp_path):
    pytest.importorskip("fsspec")
    local = make_config(tmp_path / "local")
    write_logs(local.paths.logs, make_events(DAY, events=1500, seed=2))
    fs, root = storage.filesystem_for("memory://feco-test/logs")
    pafs.copy_files(str(local.paths.logs), root, destination_filesystem=fs)
    remote = make_config(tmp_path / "remote", paths={
        "logs": "memory://feco-test/logs", "samples": "memory://feco-test/samples", "warehouse": "feco.duckdb"})
    tasks.run_day(DAY, local, deliver=False)
    tasks.run_day(DAY, remote, deliver=False)
    assert _states(remote).equals(_states(local))


def test_readiness_reads_a_buckets_listing(tmp_path, bucket):
    from datetime import datetime, timedelta

    local = make_config(tmp_path / "local")
    write_logs(local.paths.logs, make_events(DAY, events=3000, seed=4))
    fs, root = storage.filesystem_for(f"s3://{bucket}/search_logs")
    pafs.copy_files(str(local.paths.logs), root, destination_filesystem=fs)
    paths = {"logs": f"s3://{bucket}/search_logs", "samples": f"s3://{bucket}/s", "warehouse": "feco.duckdb"}
    settled = make_config(tmp_path, paths=paths, readiness={"settle_minutes": 30})
    marked = make_config(tmp_path, paths=paths, readiness={"marker": "_SUCCESS"})
    now = datetime.now(UTC)
    assert not tasks.check_logs(DAY, settled, now=now).ready  # just written
    assert tasks.check_logs(DAY, settled, now=now + timedelta(minutes=31)).ready
    assert not tasks.check_logs(DAY, marked, now=now).ready
    fs.open_output_stream(f"{root}/ds={DAY}/_SUCCESS").close()
    assert tasks.check_logs(DAY, marked, now=now).ready


def _bucket_files(location: str) -> dict[str, bytes]:
    fs, root = storage.filesystem_for(location)
    found = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    return {info.path: fs.open_input_file(info.path).read() for info in found if info.type == pafs.FileType.File}


def test_a_refused_rerun_in_a_bucket_leaves_the_published_sample_and_a_cut_swap_is_finished(tmp_path, bucket):
    logs = tmp_path / "logs"
    write_logs(logs, make_events(DAY, events=3000, seed=4))
    fs, root = storage.filesystem_for(f"s3://{bucket}/search_logs")
    pafs.copy_files(str(logs), root, destination_filesystem=fs)
    samples = f"s3://{bucket}/feco/samples"
    remote = make_config(tmp_path, paths={"logs": f"s3://{bucket}/search_logs", "samples": samples,
                                          "warehouse": "feco.duckdb"})
    tasks.sample(DAY, remote)
    published = _bucket_files(samples)
    hour = f"{root}/ds={DAY}/hour=04"
    fs.copy_file(f"{hour}/part-0.parquet", f"{hour}/part-0 (1).parquet")
    with pytest.raises(DataError, match="have rows in two files") as refused:
        tasks.sample(DAY, remote)
    for name in ("part-0.parquet", "part-0 (1).parquet"):  # named as configured, scheme and all
        assert f"s3://{bucket}/search_logs/ds={DAY}/hour=04/{name}" in str(refused.value)
    assert _bucket_files(samples) == published  # untouched, no staging left

    # A run killed in the swap, after the published summary went: the next sample step copies
    # the complete staged sample in.
    fs.delete_file(f"{hour}/part-0 (1).parquet")
    staging = f"{bucket}/feco/samples/_ds={DAY}.tmp"
    for path, data in published.items():
        if f"ds={DAY}/" in path:
            with fs.open_output_stream(path.replace(f"feco/samples/ds={DAY}", f"feco/samples/_ds={DAY}.tmp")) as out:
                out.write(data)
    fs.delete_file(f"{bucket}/feco/samples/ds={DAY}/_windows.parquet")
    recover_samples(remote)
    assert _bucket_files(samples) == published
    assert fs.get_file_info(staging).type == pafs.FileType.NotFound
