"""REST API for runs: start, list with filters, detail, tree (rows + colors), trace, cancel."""

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import IntegrityError
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KeyTransform
from django.http import HttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from approvals.models import ApprovalRequest, ApprovalStatus
from braid.api_errors import NUMBER_MAX
from braid.auth import group_names
from braid.permissions import ALL, Act, Allowed, scope
from braid.schema import RefusalSerializer
from designer.documents import NUL_REFUSED, holds_nul
from designer.models import FlowVersion
from engine import durable, services
from engine.core.colors import Color
from engine.core.events import RunStatus
from engine.core.inputs import InputRejected
from engine.core.values import loads_strict
from engine.models import Run, TraceEvent


class RunSerializer(serializers.ModelSerializer):
    """A run as the API lists it."""

    flow = serializers.SerializerMethodField()
    version = serializers.IntegerField(source="flow_version.number", read_only=True, default=None)
    started_by = serializers.CharField(
        source="started_by.get_username", read_only=True, default=None
    )

    class Meta:
        model = Run
        fields = ["id", "flow", "version", "label", "status", "input", "state", "error",
                  "started_by", "created_at", "updated_at"]  # fmt: skip
        read_only_fields = fields

    def get_flow(self, run: Run) -> str | None:
        return run.flow_version.flow.slug if run.flow_version else None


# The columns RunSerializer shows, as RunSerializer's fields name them. Not the run's
# graphs, snapshot or redrive, nor its flow version's document, which a list of runs would
# decode row by row.
LISTED_COLUMNS = {
    "id": "id", "flow": "flow_version__flow__slug", "version": "flow_version__number",
    "label": "label", "status": "status", "input": "input", "state": "state",
    "error": "error", "started_by": "started_by__username", "created_at": "created_at",
    "updated_at": "updated_at",
}  # fmt: skip


def listed(runs: QuerySet[Run]) -> QuerySet[Run, dict[str, Any]]:
    """Read only the columns RunSerializer shows, as values (rows() formats them)."""
    return runs.values(*LISTED_COLUMNS.values())


def rows(listed_runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return listed runs as RunSerializer shows them.

    A list of runs (a page of the API, the runs-list socket's changed rows) builds no model
    instance and no serializer field per value: RunSerializer took about 80 µs a run, most
    of the runs-list socket's cost while runs finish (docs/live.md).
    tests/django/test_api__runs.py holds the two equal.
    """
    zone = timezone.get_current_timezone()  # as DRF's DateTimeField shows a time

    def shown_time(value: dt.datetime) -> str:
        text = value.astimezone(zone).isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text

    shown = []
    for values in listed_runs:
        row = {field: values[column] for field, column in LISTED_COLUMNS.items()}
        row["id"] = str(row["id"])
        row["created_at"] = shown_time(row["created_at"])
        row["updated_at"] = shown_time(row["updated_at"])
        shown.append(row)
    return shown


class StartSerializer(serializers.Serializer):
    """What starting a run takes: a flow slug, optionally a version, and the input."""

    flow = serializers.SlugField()
    version = serializers.IntegerField(required=False, min_value=1, max_value=NUMBER_MAX)
    input = serializers.JSONField(required=False, default=dict)

    def validate_input(self, value: object) -> object:
        if holds_nul(value):
            raise serializers.ValidationError(NUL_REFUSED)
        return value


IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")
IDEMPOTENCY_PARAMETER = OpenApiParameter(
    "Idempotency-Key", str, OpenApiParameter.HEADER, pattern=r"^[\x21-\x7e]{1,255}$",
    description="1 to 255 visible ASCII characters, unique per start: a start retried with "
    "the same key and body answers 200 with the run it started (and the header "
    "`Idempotent-Replayed: true`) instead of starting another; with another body, 422.",
)  # fmt: skip


def start_digest(data: dict[str, object]) -> str:
    """Return the digest of a start request as validated: flow, version and input."""
    request = {"flow": data["flow"], "version": data.get("version"), "input": data["input"]}
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def replayed(user: object, key: str, digest: str) -> Response | None:
    """Answer a start whose Idempotency-Key the user sent before: the run it started, or
    422 when the key came with another request; None if the key is new."""
    run = Run.objects.filter(started_by=user, idempotency_key=key).first()
    if run is None:
        return None
    if run.idempotency_digest != digest:
        detail = (f"this Idempotency-Key started run {run.pk} with a different request; "
                  "send a new key to start another run")  # fmt: skip
        return Response({"code": "run.idempotency_conflict", "detail": detail}, status=422)
    response = Response(RunSerializer(run).data, status=status.HTTP_200_OK)
    response["Idempotent-Replayed"] = "true"
    return response


class CancelSerializer(serializers.Serializer):
    """Why a run is cancelled."""

    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class NodeRowSerializer(serializers.Serializer):
    """One node row (CONTRACT §3)."""

    status = serializers.ChoiceField(choices=["running", "waiting", "completed", "failed"])
    execution_id = serializers.CharField()
    result = serializers.JSONField(allow_null=True)
    attempt = serializers.IntegerField()


class VoteSerializer(serializers.Serializer):
    """One person's decision at an approval."""

    user = serializers.CharField()
    groups = serializers.ListField(child=serializers.CharField())
    decision = serializers.ChoiceField(choices=["approve", "reject"])
    comment = serializers.CharField(allow_blank=True)
    at = serializers.CharField()


class TreeSerializer(serializers.Serializer):
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


class TraceEventSerializer(serializers.Serializer):
    """One trace event."""

    seq = serializers.IntegerField()
    event = serializers.CharField()
    execution_id = serializers.CharField()
    node = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    detail = serializers.JSONField()


class WriteSerializer(serializers.Serializer):
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


class WritesSerializer(serializers.Serializer):
    """The state writes of a node's lineage."""

    node = serializers.CharField()
    execution_id = serializers.CharField()
    writes = WriteSerializer(many=True)


FILTERS = [
    OpenApiParameter("flow", str, description="flow slug"),
    OpenApiParameter("status", str, enum=[s.value for s in RunStatus]),
    OpenApiParameter("started_by", str, description="user name"),
    OpenApiParameter("created_after", str, description="ISO 8601 time"),
    OpenApiParameter("created_before", str, description="ISO 8601 time"),
    OpenApiParameter(
        "waiting_on_me", bool, description="only runs with an open approval for my groups"
    ),
    OpenApiParameter(
        "state",
        str,
        description="field:value — runs whose state field equals the value (read as JSON "
        "when it is JSON, else as text; equality only)",
        pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,99}:[^\u0000]*$",
    ),
]


STATE_FIELD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


def filtered(
    runs: QuerySet[Run], params: dict[str, str], user: AbstractBaseUser | AnonymousUser
) -> QuerySet[Run]:
    """Apply the list filters; a malformed one is a 400, not an empty list."""
    waiting = params.get("waiting_on_me", "")
    if waiting not in ("", "true", "false", "1", "0"):
        raise ValidationError({"waiting_on_me": "use true or false"})
    if waiting in ("true", "1"):
        asking = ApprovalRequest.objects.filter(
            status=ApprovalStatus.OPEN, groups__overlaps=list(group_names(user))
        )
        runs = runs.filter(pk__in=asking.values("run_id"))
    if params.get("flow"):
        runs = runs.filter(flow_version__flow__slug=params["flow"])
    if params.get("status"):
        if params["status"] not in {s.value for s in RunStatus}:
            raise ValidationError({"status": f"not a run status: {params['status']!r}"})
        runs = runs.filter(status=params["status"])
    if params.get("started_by"):
        runs = runs.filter(started_by__username=params["started_by"])
    for name, lookup in (
        ("created_after", "created_at__gte"),
        ("created_before", "created_at__lte"),
    ):
        if params.get(name):
            runs = runs.filter(**{lookup: moment(name, params[name])})
    if params.get("state"):
        runs = state_equals(runs, params["state"], params.get("flow"))
    return runs


def moment(name: str, text: str) -> dt.datetime:
    """Return an ISO 8601 time (UTC when it names no zone), or raise a 400 naming the field."""
    try:
        parsed = parse_datetime(text) or parse_date_only(text)
    except ValueError:
        parsed = None
    if parsed is None:
        raise ValidationError({name: f"not an ISO 8601 time: {text[:40]!r}"})
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def parse_date_only(text: str) -> dt.datetime | None:
    """Return midnight UTC of a plain date such as 2026-12-04."""
    day = parse_date(text)
    return None if day is None else dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC)


def state_equals(runs: QuerySet[Run], condition: str, flow: str | None) -> QuerySet[Run]:
    """Filter by `field:value`: runs whose state field equals the value, and nothing else.

    The field must be a state field that a published flow (the `flow` filter's, when
    given) declares, and it becomes one key transform of the `state` column, never part of
    a lookup path, so no lookup (`regex`, `contains`, ...) can be spelled. The value is read
    as JSON when it is JSON (`count:3`, `ok:true`, `tag:"3"`), else as text
    (`decision:approved`).
    """
    field, separator, text = condition.partition(":")
    if not separator or not STATE_FIELD.fullmatch(field):
        raise ValidationError(
            {"state": "use field:value with a state field name, e.g. state=decision:approved"}
        )
    declaring = FlowVersion.objects.filter(graph__state__has_key=field)
    if not declaring.filter(flow__slug=flow).exists() if flow else not declaring.exists():
        where = f"flow {flow!r}" if flow else "any published flow"
        raise ValidationError({"state": f"{field!r} is not a state field of {where}"})
    try:
        value = loads_strict(text)
    except ValueError:  # not JSON, or NaN or Infinity, which no stored state holds
        value = text
    if isinstance(value, (dict, list)):
        raise ValidationError({"state": "compare with a number, text, true, false or null"})
    return runs.alias(state_value=KeyTransform(field, "state")).filter(state_value=value)


def visible_runs(runs: QuerySet[Run], user: AbstractBaseUser | AnonymousUser) -> QuerySet[Run]:
    """Narrow runs to what the permission table lets the user read.

    Everyone else than an admin reads the runs they started and the runs that wait, or
    waited, on a decision of one of their groups: an approver must see what they decide.
    """
    if scope(user, Act.READ_RUNS) == ALL:
        return runs
    if not user.is_authenticated:
        return runs.none()
    asked = ApprovalRequest.objects.filter(groups__overlaps=list(group_names(user)))
    return runs.filter(Q(started_by=user) | Q(pk__in=asked.values("run_id")))


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Runs: admins see every run; everyone else the runs they started."""

    serializer_class = RunSerializer
    # Not "trace": the trace/ action is a method of that name, and DRF would route HTTP
    # TRACE to it and advertise it in Allow.
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return Run.objects.none()
        runs = Run.objects.select_related("flow_version__flow", "started_by")
        if self.action in ("tree", "writes"):
            # The tree reads the graphs from the per-process cache and the writes the trace,
            # not this row's large columns.
            runs = runs.defer("graphs", "snapshot", "input", "state", "redrive")
        return visible_runs(runs, self.request.user).order_by("-created_at")

    def get_permissions(self):  # type: ignore[no-untyped-def]
        act = {"create": Act.START_RUNS, "cancel": Act.ADMINISTER_RUNS,
               "retry": Act.ADMINISTER_RUNS}.get(self.action, Act.READ_RUNS)  # fmt: skip
        return [Allowed.to(act)()]

    @extend_schema(parameters=FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        runs = filtered(self.get_queryset(), request.query_params.dict(), request.user)
        page = self.paginate_queryset(listed(runs))
        return self.get_paginated_response(rows(page))

    @extend_schema(
        request=StartSerializer,
        parameters=[IDEMPOTENCY_PARAMETER],
        responses={201: RunSerializer, 200: RunSerializer, 422: OpenApiResponse(RefusalSerializer)},
    )
    def create(self, request: Request) -> Response:
        """Start a run of a flow's published version (the latest unless one is named).

        An input that does not match the flow's `input` schema is refused before anything is
        stored: 400 `{"code": "run.input", "detail": sentence, "fields": {path: reason}}`.
        With an `Idempotency-Key` header, a retry of the same start answers the run it
        started (200) rather than starting another.
        """
        key = request.headers.get("Idempotency-Key", "")
        if "Idempotency-Key" in request.headers and not IDEMPOTENCY_KEY.fullmatch(key):
            detail = "an Idempotency-Key is 1 to 255 visible ASCII characters"
            return Response({"code": "run.idempotency_key", "detail": detail}, status=400)
        form = StartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        digest = start_digest(data) if key else ""
        if key and (answer := replayed(request.user, key, digest)) is not None:
            return answer
        try:
            version = services.latest_version(data["flow"], data.get("version"))
            graphs = services.resolve_graphs(version.graph)
        except services.RunRefused as refused:
            return Response({"code": "run.refused", "detail": str(refused)}, status=400)
        label = f"{version.flow.slug} v{version.number}"
        try:
            run = durable.create_run(graphs, label, data["input"], version, request.user,
                                     (key, digest))  # fmt: skip
        except InputRejected as rejected:
            body = {"code": "run.input", "detail": str(rejected), "fields": rejected.fields}
            return Response(body, status=400)
        except IntegrityError:
            # The same key, sent again while the first start was being stored: its run.
            if key and (answer := replayed(request.user, key, digest)) is not None:
                return answer
            raise
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=TreeSerializer)
    @action(detail=True, methods=["get"])
    def tree(self, request: Request, pk: str) -> Response:
        """Return the run's node rows and every node's color, from one SELECT of its rows."""
        run = self.get_object()
        with services.gc_paused():  # building and encoding 10,000 rows: see gc_paused
            body = json.dumps(services.build_tree(run), ensure_ascii=False, separators=(",", ":"))
        return HttpResponse(body.encode(), content_type="application/json")

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
        found = services.node_writes(run, path)
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
        body = [{"seq": e.seq, "event": e.event, "execution_id": e.execution_id,
                 "node": e.node or None, "at": e.at, "detail": e.detail} for e in page]  # fmt: skip
        return self.get_paginated_response(body)

    @extend_schema(
        request=CancelSerializer,
        responses={202: RunSerializer, 409: OpenApiResponse(RefusalSerializer)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel a run: every frame stops; the cancel is recorded with who asked."""
        run = self.get_object()
        if RunStatus(run.status).finished:
            return Response(
                {"code": "run.finished", "detail": f"the run is {run.status}"}, status=409
            )
        form = CancelSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        durable.cancel(run, request.user.get_username(), form.validated_data["reason"])
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(
        request=None, responses={202: RunSerializer, 409: OpenApiResponse(RefusalSerializer)}
    )
    @action(detail=True, methods=["post"])
    def retry(self, request: Request, pk: str) -> Response:
        """Retry a run an action's failure ended: only that action runs again."""
        run = self.get_object()
        try:
            durable.retry(str(run.pk), request.user.get_username())
        except durable.RetryRefused as refused:
            return Response({"code": "run.not_retryable", "detail": str(refused)}, status=409)
        run.refresh_from_db()
        return Response(RunSerializer(run).data, status=status.HTTP_202_ACCEPTED)
