"""What the processing of a session tells the rest of the service, without importing it.

``session_processed`` is sent once the final write of a processed session has committed, with the
session (carrying the content generation just written: ``content_storage_key``, ``processed_at``)
and its content document as a dict; the session page warms its cache with it (``frontend.apps``).
A receiver's error is logged and never fails the processing.
"""

from __future__ import annotations

from django.dispatch import Signal

session_processed = Signal()  # sender=Session; session=Session, document=dict
