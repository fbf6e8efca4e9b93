"""The designer's Test run, POST /api/flows/<slug>/test-run/: runs the draft (or a posted
graph) in a test-run worker; nothing is stored.

Registered on the flows prefix beside designer's FlowViewSet (braid/api_urls.py), as the
monitor adds its actions to runs: running a flow is this app's job, and the designer does
not import runs.
"""

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from designer.api import REFUSAL, FlowSerializer
from designer.models import Flow
from engine.core.events import Decision
from runs import services
from runs.test_runs import WorkersBusy
from web.documents import NUL_REFUSED, holds_nul
from web.permissions import Act, Allowed


class TestDecisionSerializer(serializers.Serializer[Any]):
    """One decision a test run takes at an approval node's open request."""

    node = serializers.CharField(max_length=1000)
    decision = serializers.ChoiceField(choices=[d.value for d in Decision])


class TestRunSerializer(serializers.Serializer[Any]):
    """A test run: sample input, optionally an unsaved graph, and decisions to take."""

    input = serializers.JSONField(required=False, default=dict)
    graph = serializers.JSONField(required=False, help_text="the draft when absent")
    decisions = TestDecisionSerializer(many=True, required=False, default=list)

    def validate_input(self, value: object) -> object:
        if holds_nul(value):
            raise serializers.ValidationError(NUL_REFUSED)
        return value


class TestRunResultSerializer(serializers.Serializer[Any]):
    """What a test run did."""

    status = serializers.CharField()
    error = serializers.CharField(allow_null=True)
    state = serializers.JSONField()
    nodes = serializers.DictField(child=serializers.JSONField())
    colors = serializers.DictField(child=serializers.CharField())
    reasons = serializers.DictField(child=serializers.CharField())
    waiting_on = serializers.ListField(child=serializers.CharField())
    refused = serializers.ListField(child=serializers.DictField(child=serializers.CharField()))
    time_skipped_s = serializers.FloatField(
        help_text="simulated seconds skipped: a test run never sleeps on a timer"
    )


class FlowTestRunViewSet(viewsets.GenericViewSet[Flow]):
    """The test run of a flow, under /api/flows/<slug>/: who may edit flows may test them."""

    # FlowSerializer as in FlowViewSet, where this action was: OPTIONS describes the same.
    serializer_class = FlowSerializer
    permission_classes = [Allowed.to(Act.EDIT_FLOWS, read=Act.READ_FLOWS)]
    lookup_field = "slug"
    queryset = Flow.objects.all()

    @extend_schema(
        request=TestRunSerializer,
        responses={
            200: TestRunResultSerializer,
            400: OpenApiResponse(REFUSAL, description="the graph does not validate"),
            503: OpenApiResponse(REFUSAL, description="every test-run worker is busy"),
        },
    )
    @action(detail=True, methods=["post"], url_path="test-run")
    def test_run(self, request: Request, slug: str) -> Response:
        """Run the draft (or a posted graph) on sample input; nothing is stored.

        It runs in a worker process under a wall time and a step budget, never on the web
        server's threads (runs/test_runs.py). Answers the run's status, state, rows and
        every node's color and reason, so the designer can color its canvas without
        publishing.
        """
        flow = self.get_object()
        form = TestRunSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        document = data.get("graph") or flow.draft
        try:
            result = services.test_run(document, data["input"], data["decisions"])
        except services.RunInputRejected as rejected:
            body: dict[str, object] = {
                "code": "run.input",
                "detail": str(rejected),
                "fields": rejected.fields,
            }
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        except services.RunRefused as refused:
            body = {"code": "run.refused", "detail": str(refused)}
            if refused.report is not None:
                body |= refused.report.to_json()
            return Response(body, status=status.HTTP_400_BAD_REQUEST)
        except WorkersBusy as busy:
            body = {"code": "test_run.busy", "detail": str(busy)}
            return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(result)
