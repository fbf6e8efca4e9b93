"""The monitor's read side of a run: its execution tree and one execution's colors.

Both come from engine/core/executions.py over the run's trace, so the browser renders the
tree's statuses and an item's, iteration's or branch's colors without inferring any.
"""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from braid.permissions import Act, Allowed
from braid.schema import RefusalSerializer
from engine.api import visible_runs
from engine.models import Run
from monitor import reading


class ExecutionSerializer(serializers.Serializer):
    """One execution of a run: the root, an item, an iteration, a branch or a subflow call."""

    id = serializers.CharField()
    parent = serializers.CharField(allow_null=True)
    kind = serializers.ChoiceField(["root", "item", "iteration", "branch", "subflow"])
    owner = serializers.CharField(allow_blank=True)
    label = serializers.CharField()
    status = serializers.ChoiceField(["running", "waiting", "completed", "failed", "cancelled"])
    reason = serializers.CharField()
    first_at = serializers.CharField(allow_blank=True)
    last_at = serializers.CharField(allow_blank=True)


class ExecutionsSerializer(serializers.Serializer):
    run = serializers.UUIDField()
    status = serializers.CharField()
    executions = ExecutionSerializer(many=True)


class ExecutionViewSerializer(serializers.Serializer):
    run = serializers.UUIDField()
    execution = serializers.CharField()
    status = serializers.CharField()
    colors = serializers.DictField(child=serializers.CharField())
    reasons = serializers.DictField(child=serializers.CharField())


class RunExecutionsViewSet(viewsets.GenericViewSet):
    """A run's executions, under /api/runs/<id>/: who may read the run may read these."""

    http_method_names = ["get", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return Run.objects.none()
        runs = Run.objects.defer("graphs", "snapshot", "input", "state", "redrive")
        return visible_runs(runs, self.request.user)

    def get_permissions(self):  # type: ignore[no-untyped-def]
        return [Allowed.to(Act.READ_RUNS)()]

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
