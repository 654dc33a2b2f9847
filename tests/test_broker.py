"""The worker's broker transport (config/broker.py) against a real Redis of the test's own: a channel
that still holds unacknowledged messages when an outage has torn its connection down fails as a lost
connection, which Celery's consumer reconnects from, not as the AttributeError that ended the worker."""

from __future__ import annotations

import pytest
from kombu import Connection, Exchange, Queue

from config import broker
from tests.e2e.redis_server import RedisServer


@pytest.fixture
def redis_server():
    server = RedisServer()
    yield server
    server.stop()


def _channel_holding_an_unacked_message(url: str) -> tuple[Connection, object]:
    queue = Queue("outage", Exchange("outage"), "outage")
    # The transport settings.py picks for a redis:// broker (the suite's own Redis may be a socket).
    with Connection(url, transport=broker.Transport) as connection:
        connection.Producer().publish({"session": 1}, exchange=queue.exchange, routing_key="outage", declare=[queue])
    connection = Connection(url, transport=broker.Transport)
    channel = connection.channel()
    assert channel.basic_get("outage", no_ack=False) is not None  # delivered, not acknowledged
    return connection, channel


def test_the_worker_s_channel_closed_after_an_outage_tore_its_connection_down_fails_as_a_lost_connection(
    redis_server,
) -> None:
    connection, channel = _channel_holding_an_unacked_message(redis_server.url)
    redis_server.stop()
    connection._do_close_transport()  # what losing the connection left behind in the consumer

    with pytest.raises(connection.connection_errors):
        channel.close()  # restoring the unacknowledged message needs the connection
