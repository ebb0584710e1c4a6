"""Webhook delivery that cannot hang or leak: one deadline per request and per run, every
failure recorded, only http(s) URLs, and no part of the URL in any error."""

import json
import time

import pytest

from feco.alerts.notify import DeliveryFailed, post_json, read_webhook_url, send_message
from feco.config import Notify
from feco.errors import ConfigError
from hostile import accept, close_early, drip, garbage, hang, hostile_server

SECRETS = ("SECRET", "QUERYSECRET", "127.0.0.1", "hooks")


def post(url, *, timeout=0.5):
    return post_json(url, {"text": "hello"}, deadline=time.monotonic() + 60, timeout=timeout)


def failure_of(url, **kwargs) -> str:
    with pytest.raises(DeliveryFailed) as failed:
        post(url, **kwargs)
    message = str(failed.value)
    assert not any(secret in message for secret in SECRETS), message
    return message


@pytest.mark.parametrize("behaviour", [drip, hang], ids=["drip", "hang"])
def test_a_server_that_drips_or_hangs_is_cut_off_at_the_deadline(behaviour):
    """The drip sends a byte every 0.1 s for 20 s: a per-read timeout of 0.5 s would wait for
    all of it. The client gives up while the server still has bytes to send."""
    with hostile_server(behaviour) as (url, outcome):
        assert failure_of(url, timeout=0.5) == "webhook timed out after 0.5s"
        # generous: on a loaded machine the server's thread may be slow to see the close
        assert outcome.client_gave_up.wait(30), "the server was still being waited for"


@pytest.mark.parametrize(("behaviour", "error"), [
    (garbage, "webhook failed: BadStatusLine"), (close_early, "webhook failed: IncompleteRead")])
def test_garbage_and_an_early_close_are_failures_not_crashes(behaviour, error):
    with hostile_server(behaviour) as (url, _):
        assert failure_of(url) == error


def test_a_run_whose_deadline_has_passed_sends_nothing_more():
    with hostile_server(accept) as (url, outcome):
        with pytest.raises(DeliveryFailed, match="deadline had passed"):
            post_json(url, {"text": "late"}, deadline=time.monotonic() - 1, timeout=5)
        post(url)  # and a healthy server is answered
    assert outcome.requests == 1


@pytest.mark.parametrize("url", [
    "file:///etc/SECRET", "ftp://127.0.0.1/hooks/SECRET", "127.0.0.1/hooks/SECRET",
    "  127.0.0.1/hooks/SECRET  ", "http://127.0.0.1/hooks/SECRET with space",
    "http://127.0.0.1:SECRET/hooks", "http:///hooks/SECRET", "javascript:SECRET", "http://127.0.0.1/\nSECRET",
])
def test_only_http_urls_are_accepted_and_a_bad_one_is_never_echoed(url, monkeypatch):
    monkeypatch.setenv("FECO_TEST_WEBHOOK", url)
    with pytest.raises(ConfigError) as refused:
        read_webhook_url(Notify(webhook_url_env="FECO_TEST_WEBHOOK"))
    assert "$FECO_TEST_WEBHOOK is not an http(s) URL" in str(refused.value)
    assert not any(secret in str(refused.value) for secret in SECRETS)


def test_surrounding_whitespace_is_dropped_and_no_url_means_no_webhook(monkeypatch):
    settings = Notify(webhook_url_env="FECO_TEST_WEBHOOK")
    monkeypatch.setenv("FECO_TEST_WEBHOOK", "  https://127.0.0.1:8443/hooks/x \n")
    assert read_webhook_url(settings) == "https://127.0.0.1:8443/hooks/x"
    monkeypatch.setenv("FECO_TEST_WEBHOOK", "   ")
    assert read_webhook_url(settings) is None


def test_send_message_uses_every_channel_and_reports_instead_of_raising(tmp_path):
    settings = Notify(jsonl=tmp_path / "messages.jsonl", webhook_url_env=None, timeout_seconds=0.5)
    echoed = []
    with hostile_server(accept) as (url, outcome):
        assert send_message("feco_daily failed", settings=settings, webhook_url=url, echo=echoed.append) == {
            "log": "delivered", "jsonl": "delivered", "webhook": "delivered"}
    assert echoed == ["feco_daily failed"] and outcome.requests == 1
    assert json.loads((tmp_path / "messages.jsonl").read_text())["message"] == "feco_daily failed"
    with hostile_server(hang) as (url, _):
        result = send_message("again", settings=settings, webhook_url=url, echo=echoed.append)
    assert result == {"log": "delivered", "jsonl": "delivered", "webhook": "failed"}
