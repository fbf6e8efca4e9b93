"""The monitor's read side of a run, under /api/runs/<id>/: its tree (rows, colors,
reasons, decisions), its trace, the writes that reach a node, its execution tree and one
execution's colors.

The colors and the executions come from engine/core (colors/, executions.py), so the
browser renders statuses and an item's, round's or branch's colors without inferring any.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from engine.core.colors import Color
from engine.core.events import RunStatus
from engine.core.values import dumps_utf8
from engine.models import Run, TraceEvent
from monitor import reading
from runs.api import visible_runs
from web.permissions import Act, Allowed
from web.schema import RefusalSerializer


class NodeRowSerializer(serializers.Serializer[Any]):
    """One node row (CONTRACT §3)."""

    status = serializers.ChoiceField(choices=["running", "waiting", "completed", "failed"])
    execution_id = serializers.CharField()
    result = serializers.JSONField(allow_null=True)
    attempt = serializers.IntegerField()


class VoteSerializer(serializers.Serializer[Any]):
    """One person's decision at an approval."""

    user = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    comment = serializers.CharField(allow_blank=True)
    at = serializers.CharField()


class TreeSerializer(serializers.Serializer[Any]):
    """A run's node rows and every node's color."""

    run = serializers.UUIDField()
    status = serializers.ChoiceField(choices=[s.value for s in RunStatus])
    nodes = serializers.DictField(child=NodeRowSerializer())
    colors = serializers.DictField(
        child=serializers.ChoiceField(choices=[color.value for color in Color])
    )
    reasons = serializers.DictField(
        child=serializers.CharField(), help_text="why each node has its color, in words"
    )
    decisions = serializers.DictField(
        child=VoteSerializer(many=True),
        help_text="who decided each decided approval, in its row's execution",
    )


class TraceEventSerializer(serializers.Serializer[Any]):
    """One trace event."""

    seq = serializers.IntegerField()
    event = serializers.CharField()
    execution_id = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    detail = serializers.JSONField()


class WriteSerializer(serializers.Serializer[Any]):
    """One state write that reached a node."""

    seq = serializers.IntegerField(help_text="the writer's completion, as a trace position")
    node = serializers.CharField(help_text="the node path that wrote it")
    execution_id = serializers.CharField()
    field = serializers.CharField()
    value = serializers.JSONField(
        allow_null=True, help_text="the value; a list or object as its JSON text, cut at 200"
    )
    via = serializers.CharField(
        allow_null=True, help_text="the merge that brought it in, or null on the node's own path"
    )


class WritesSerializer(serializers.Serializer[Any]):
    """The state writes of a node's lineage."""

    node = serializers.CharField()
    execution_id = serializers.CharField()
    writes = WriteSerializer(many=True)


class ExecutionSerializer(serializers.Serializer[Any]):
    """One execution of a run: the root, an item, an iteration, a branch or a subflow call."""

    id = serializers.CharField()
    if not TYPE_CHECKING:  # DRF takes declared fields off the class; to mypy these would
        parent = serializers.CharField(allow_null=True)  # hide the field's own attributes
    kind = serializers.ChoiceField(["root", "item", "iteration", "branch", "subflow"])
    owner = serializers.CharField(allow_blank=True)
    if not TYPE_CHECKING:
        label = serializers.CharField()
    status = serializers.ChoiceField(["running", "waiting", "completed", "failed", "cancelled"])
    reason = serializers.CharField()
    first_at = serializers.CharField(allow_blank=True)
    last_at = serializers.CharField(allow_blank=True)


class ExecutionsSerializer(serializers.Serializer[Any]):
    run = serializers.UUIDField()
    status = serializers.CharField()
    executions = ExecutionSerializer(many=True)


class ExecutionViewSerializer(serializers.Serializer[Any]):
    run = serializers.UUIDField()
    execution = serializers.CharField()
    status = serializers.CharField()
    colors = serializers.DictField(child=serializers.CharField())
    reasons = serializers.DictField(child=serializers.CharField())


class RunMonitorViewSet(viewsets.GenericViewSet[Any]):  # Any: it pages trace events too
    """What the monitor reads of a run, under /api/runs/<id>/: who may read the run may
    read these."""

    # Not "trace": the trace/ action is a method of that name, and DRF would route HTTP
    # TRACE to it and advertise it in Allow.
    http_method_names = ["get", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return Run.objects.none()
        runs = Run.objects.defer("graphs", "snapshot", "input", "state", "redrive")
        return visible_runs(runs, self.request.user)

    def get_permissions(self) -> list[BasePermission]:
        return [Allowed.to(Act.READ_RUNS)()]

    @extend_schema(responses=TreeSerializer)
    @action(detail=True, methods=["get"])
    def tree(self, request: Request, pk: str) -> HttpResponse:
        """Return the run's node rows and every node's color, from one SELECT of its rows."""
        run = self.get_object()
        with reading.gc_paused():  # building and encoding 10,000 rows: see gc_paused
            body = dumps_utf8(reading.build_tree(run))
        return HttpResponse(body, content_type="application/json")

    @extend_schema(
        parameters=[OpenApiParameter("node", str, required=True, description="a node path")],
        responses={200: WritesSerializer, 400: OpenApiResponse(RefusalSerializer)},
    )
    @action(detail=True, methods=["get"])
    def writes(self, request: Request, pk: str) -> Response:
        """Return the state writes of a node's lineage: its own, and what gathers, foreach
        items, loop iterations and race winners merged into its path before it completed
        (rebuilt from the trace; engine/core/history.py)."""
        run = self.get_object()
        path = request.query_params.get("node", "")
        found = reading.node_writes(run, path)
        if found is None:
            detail = f"no node {path!r} has run in this run" if path else "name a node: ?node="
            return Response({"code": "run.node", "detail": detail}, status=400)
        execution_id, writes = found
        return Response({"node": path, "execution_id": execution_id,
                         "writes": [write.to_json() for write in writes]})  # fmt: skip

    @extend_schema(responses=TraceEventSerializer(many=True))
    @action(detail=True, methods=["get"])
    def trace(self, request: Request, pk: str) -> Response:
        """Return the run's trace events in order, paged."""
        run = self.get_object()
        events = TraceEvent.objects.filter(run=run).order_by("seq")
        page = self.paginate_queryset(events)
        assert page is not None  # the API pages every list (REST_FRAMEWORK's settings)
        body = [{"seq": e.seq, "event": e.event, "execution_id": e.execution_id,
                 "node": e.node or None, "at": e.at, "detail": e.detail} for e in page]  # fmt: skip
        return self.get_paginated_response(body)

    @extend_schema(responses=ExecutionsSerializer)
    @action(detail=True, methods=["get"])
    def executions(self, request: Request, pk: str) -> Response:
        """Return the run's execution tree, parents first, each with its status and why."""
        return Response(reading.execution_tree(self.get_object()))

    @extend_schema(
        parameters=[OpenApiParameter("id", str, required=True, description="an execution id")],
        responses={200: ExecutionViewSerializer, 400: OpenApiResponse(RefusalSerializer)},
    )
    @action(detail=True, methods=["get"], url_path="execution")
    def execution(self, request: Request, pk: str) -> Response:
        """Return every node's color and reason as it stood in one execution."""
        run = self.get_object()
        found = reading.execution_view(run, request.query_params.get("id", ""))
        if isinstance(found, str):
            return Response({"code": "run.execution", "detail": found}, status=400)
        return Response(found)
