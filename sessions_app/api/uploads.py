"""Resumable uploads: ``…/uploads`` (begin or resume), ``…/uploads/{id}`` (what arrived),
``…/uploads/{id}/parts/{n}`` (one part), ``…/uploads/{id}/finish`` (ingest the joined body)
(docs/api.md "Resumable uploads"; the parts' store: sessions_app/resumable.py)."""

from __future__ import annotations

import io
from typing import Any, cast

from django.http import Http404
from django.http.multipartparser import MultiPartParser, MultiPartParserError
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import BaseParser, JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from config import metrics
from projects.access import ProjectAPIView, acting_user
from projects.errors import DomainError
from sessions_app import backpressure, resumable
from sessions_app.api.common import INGEST_ERRORS
from sessions_app.api.ingest import idempotency_key, ingest_form, session_answer
from sessions_app.models import PartialUpload
from sessions_app.serializers import IngestAcceptedSerializer
from sessions_app.throttles import IngestThrottle, WriteThrottle

UPLOAD_STATE = inline_serializer(
    "ResumableUpload",
    {
        "id": serializers.UUIDField(),
        "size": serializers.IntegerField(),
        "part_size": serializers.IntegerField(),
        "parts": serializers.IntegerField(help_text="how many parts the body is cut into"),
        "received": serializers.ListField(child=serializers.IntegerField(), help_text="parts stored"),
        "received_bytes": serializers.IntegerField(),
        "finished": serializers.BooleanField(),
    },
)


class _RawPart(BaseParser):
    """A part's bytes as they come: the view reads them from the stream, bounded."""

    media_type = "application/octet-stream"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return stream


def _state(upload: PartialUpload) -> dict[str, Any]:
    return {
        "id": str(upload.pk),
        "size": upload.size,
        "part_size": upload.part_size,
        "parts": resumable.part_count(upload),
        "received": sorted(int(i) for i in upload.parts),
        "received_bytes": resumable.received_bytes(upload),
        "finished": upload.session_id is not None,
    }


class _UploadView(ProjectAPIView):
    def upload(self, request: Request, upload_id: object) -> PartialUpload:
        """The caller's own upload in this project; anyone else's is a 404 like a missing one."""
        mine = PartialUpload.objects.filter(project=self.project, author=acting_user(request), pk=upload_id)
        found: PartialUpload | None = mine.first()
        if found is None:
            raise Http404
        return found


class UploadsView(_UploadView):
    """``POST``: begin a resumable upload, or find the open one of this ``Idempotency-Key``."""

    parser_classes = [JSONParser]
    throttle_classes = [WriteThrottle]

    @extend_schema(
        request=inline_serializer(
            "ResumableUploadBegin",
            {
                "size": serializers.IntegerField(help_text="the multipart body's length in bytes"),
                "sha256": serializers.CharField(help_text="the body's SHA-256, lowercase hex"),
                "content_type": serializers.CharField(help_text="multipart/form-data; boundary=…"),
            },
        ),
        parameters=[OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=True)],
        responses={201: UPLOAD_STATE, 200: UPLOAD_STATE, **INGEST_ERRORS},
    )
    def post(self, request: Request, project: str) -> Response:
        key = idempotency_key(request)
        if key is None:
            raise DomainError("missing", "A resumable upload needs an Idempotency-Key.", field="Idempotency-Key")
        data = request.data if isinstance(request.data, dict) else {}
        upload, created = resumable.begin(
            self.project, acting_user(request), key, data.get("size"), data.get("sha256"), data.get("content_type")
        )
        return Response(_state(upload), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class UploadView(_UploadView):
    """``GET``: which parts have arrived."""

    @extend_schema(responses={200: UPLOAD_STATE})
    def get(self, request: Request, project: str, upload_id: str) -> Response:
        return Response(_state(self.upload(request, upload_id)))


class UploadPartView(_UploadView):
    """``PUT``: one part's bytes (``application/octet-stream``); sending it again changes nothing."""

    parser_classes = [_RawPart]
    throttle_classes = [WriteThrottle]

    @extend_schema(
        request={"application/octet-stream": {"type": "string", "format": "binary"}},
        responses={200: UPLOAD_STATE, **INGEST_ERRORS},
    )
    def put(self, request: Request, project: str, upload_id: str, index: int) -> Response:
        upload = self.upload(request, upload_id)
        try:
            length: int | None = int(request.headers.get("Content-Length") or "")
        except ValueError:
            length = None
        resumable.store_part(upload, index, request.stream or io.BytesIO(), length)
        return Response(_state(upload))


class UploadFinishView(_UploadView):
    """``POST``: join the parts and ingest them as one ``POST …/sessions`` (the same answers)."""

    throttle_classes = [IngestThrottle]

    @extend_schema(
        request=None, responses={202: IngestAcceptedSerializer, 200: IngestAcceptedSerializer, **INGEST_ERRORS}
    )
    def post(self, request: Request, project: str, upload_id: str) -> Response:
        upload = self.upload(request, upload_id)
        if upload.session is not None:  # finished before: the same session, changed nothing
            return Response(session_answer(upload.session), status=status.HTTP_200_OK)
        backpressure.refuse_when_behind(self.project)
        with resumable.joined(upload) as body:
            meta = {"CONTENT_TYPE": upload.content_type, "CONTENT_LENGTH": str(upload.size)}
            try:
                form, files = MultiPartParser(meta, cast(Any, body), request.upload_handlers).parse()
            except MultiPartParserError as exc:
                raise DomainError("invalid", f"The joined parts are not a multipart form: {exc}") from None
            result, answer = ingest_form(self, request, form, files, upload.idempotency_key)
        code = status.HTTP_202_ACCEPTED if result.created else status.HTTP_200_OK
        resumable.finished(upload, result.session, code)
        return Response(answer, status=code)

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Any:
        """A finished upload is an upload: counted with the others, by status."""
        metrics.UPLOADS.labels(str(response.status_code)).inc()
        return super().finalize_response(request, response, *args, **kwargs)
