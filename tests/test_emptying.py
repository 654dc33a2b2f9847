"""What a transactional test leaves is gone before the next one starts (tests/emptying.py), as after
Django's flush: every table of the models empty, content types and permissions as the migrations left them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django_scopes import scopes_disabled

from sessions_app.models import InsightsDay, Session
from tests.emptying import KEPT_TABLES, empty_tables


def _rows_per_table() -> dict[str, int]:
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        counts = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            counts[table] = cursor.fetchone()[0]
    return counts


@pytest.mark.django_db(transaction=True)
def test_a_world_with_processed_sessions_is_emptied_but_content_types_and_permissions_stay(world, ingest) -> None:
    ingest(world.project, world.member, "Add capture")
    ingest(world.other_project, world.other_admin, "Add export")
    with scopes_disabled():
        assert Session.objects.count() == 2 and InsightsDay.objects.exists()  # the trigger's rows, remade on DELETE
    kinds, permissions = set(ContentType.objects.values_list("pk", "app_label", "model")), Permission.objects.count()

    empty_tables("default")

    left = {table: rows for table, rows in _rows_per_table().items() if rows and table not in KEPT_TABLES}
    assert left == {}
    assert set(ContentType.objects.values_list("pk", "app_label", "model")) == kinds
    assert Permission.objects.count() == permissions > 0
