"""Celery's Redis transport (kombu's), with the one failure of a broker outage that ended the worker
turned into the connection error it is (docs/deployment.md "Probes and outages").

When a channel closes, kombu puts the messages it delivered and nobody acknowledged back on their queue,
through the channel's connection. After an outage that connection may already be torn down (its
transport's ``client`` cleared): the restore then raised ``AttributeError: 'NoneType' object has no
attribute 'hostname'``, which Celery's consumer does not count as a connection error, so the worker
stopped with an "Unrecoverable error" (1 of 3 Redis stops) and processed nothing until restarted. Raised
as a ``redis.ConnectionError``, the consumer reconnects as it does for any lost connection. Nothing is
lost: messages still in Redis are restored after the visibility timeout, and a session that was processing
is queued again once its slot's lease runs out (the reaper, docs/scaling.md), the rows being the record.
``_connparams`` is kombu's, where the connection is read: tests/test_broker.py fails if an upgrade moves it.
"""

from __future__ import annotations

from typing import Any

import redis
from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):  # type: ignore[misc,unused-ignore]  # kombu: no hints
    def _connparams(self, asynchronous: bool = False) -> Any:
        if self.connection.client is None:  # the transport was closed under this channel
            raise redis.ConnectionError("the connection to the broker is closed")
        return super()._connparams(asynchronous)  # type: ignore[no-untyped-call,unused-ignore]  # kombu: no hints


class Transport(kombu_redis.Transport):  # type: ignore[misc,unused-ignore]
    Channel = Channel
