from __future__ import annotations

from django.db import transaction

from projects.models import Project, User
from sessions_app.models import CommitLink


@transaction.atomic
def relink_commits(*, project: Project, user: User | None, pairs: list[dict[str, str]]) -> int:
    """Link new hashes to old ones (idempotent); returns how many links are new. ``user`` is None
    when the server links on its own (a merge seen on the forge, docs/forges.md)."""
    created = 0
    for pair in pairs:
        if pair["old"] == pair["new"]:
            continue
        _, made = CommitLink.objects.get_or_create(
            project=project, old_hash=pair["old"], new_hash=pair["new"], defaults={"created_by": user}
        )
        created += made
    return created
