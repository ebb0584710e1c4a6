"""feco_daily on logs in a bucket, its credentials only in an Airflow connection."""

import json
from datetime import date

import duckdb
import pytest

from dags.conftest import DAGS
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from logbuilder import make_events, write_config_file, write_logs

moto_server = pytest.importorskip("moto.server", reason="moto[server] (the test extra) is not installed")

DAY = date(2026, 1, 3)
RUN_DAY = f"""
    import pendulum
    # the run that fires at midnight after DAY, as the scheduled one does, processes DAY
    run = bag.get_dag("feco_daily").test(
        logical_date=pendulum.datetime({DAY.year}, {DAY.month}, {DAY.day}, tz="UTC").add(days=1))
    print(run.state)
"""


def test_dag_reads_logs_from_s3_with_credentials_from_a_connection(airflow_home, tmp_path, monkeypatch):
    import pyarrow.fs as pafs

    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        s3 = pafs.S3FileSystem(access_key="feco", secret_key="feco-secret", region="us-east-1",
                               endpoint_override=endpoint, scheme="http", allow_bucket_creation=True)
        s3.create_dir("team-logs")
        write_logs(tmp_path / "staging", make_events(DAY, events=2000, seed=3))
        pafs.copy_files(str(tmp_path / "staging"), "team-logs/search", destination_filesystem=s3)
        config = write_config_file(tmp_path)
        config.write_text(config.read_text().replace('logs = "logs"', 'logs = "s3://team-logs/search"')
                          .replace('samples = "samples"', 'samples = "s3://team-logs/feco/samples"')
                          .replace("[logs]", 'airflow_connection = "feco_logs"\n[logs]'))
        for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ENDPOINT_URL", "AWS_REGION"):
            monkeypatch.delenv(name, raising=False)  # the connection is the only source
        connection = {"conn_type": "aws", "login": "feco", "password": "feco-secret",
                      "extra": {"endpoint_url": endpoint, "region_name": "us-east-1"}}
        out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + RUN_DAY,
                             FECO_CONFIG=str(config), AIRFLOW_CONN_FECO_LOGS=json.dumps(connection))
        assert out == "success"
        assert any("/window=" in info.path for info in s3.get_file_info(
            pafs.FileSelector(f"team-logs/feco/samples/ds={DAY}", recursive=True)))
    finally:
        server.stop()
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT ds, events_sampled FROM runs").fetchall() == [(DAY, 40)]
