"""``/api/v1/projects/{project}`` with DELETE: rows now, blobs through the deletion outbox (docs/security.md
"Erasure"). GET and PATCH are ``projects.api.ProjectDetailView``'s; DELETE lives here because only this
app reaches the sessions' blobs."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from projects.api import ProjectDetailView
from sessions_app.deletion import project_delete


class ProjectView(ProjectDetailView):
    @extend_schema(responses={204: None}, description="Delete the project, its sessions and their blobs (admins).")
    def delete(self, request: Request, project: str) -> Response:
        project_delete(project=self.project)
        return Response(status=status.HTTP_204_NO_CONTENT)
