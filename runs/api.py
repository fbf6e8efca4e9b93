"""REST API for runs: start, list with filters, detail, tree (rows + colors), trace, cancel."""

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.db import IntegrityError
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response

from approvals.models import ApprovalRequest, ApprovalStatus
from designer.models import FlowVersion
from engine.core.events import RunStatus
from engine.core.inputs import InputRejected
from engine.core.values import loads_strict
from engine.models import Run
from engine.runtime import runs as durable
from runs import services
from web.api_errors import NUMBER_MAX
from web.auth import caller, group_names
from web.documents import NUL_REFUSED, holds_nul
from web.permissions import ALL, Act, Allowed, scope
from web.schema import RefusalSerializer


class RunSerializer(serializers.ModelSerializer[Run]):
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
    values: QuerySet[Run, dict[str, Any]] = runs.values(*LISTED_COLUMNS.values())
    return values


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


class StartSerializer(serializers.Serializer[Any]):
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


def replayed(user: User, key: str, digest: str) -> Response | None:
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


REASON_MAX = 500
BULK_MAX = 100


def reason_field() -> serializers.CharField:
    """Return the optional reason of a cancel: at most REASON_MAX characters."""
    too_long = f"a reason is at most {REASON_MAX} characters; shorten it"
    return serializers.CharField(required=False, allow_blank=True, default="",
                                 max_length=REASON_MAX,
                                 error_messages={"max_length": too_long})  # fmt: skip


class CancelSerializer(serializers.Serializer[Any]):
    """Why a run is cancelled (optional, shown in the monitor's reasons and the trace)."""

    reason = reason_field()


class BulkAction(StrEnum):
    """What a bulk request does to each run."""

    CANCEL = "cancel"
    RETRY = "retry"


@extend_schema_field(
    {"type": "array", "minItems": 1, "maxItems": BULK_MAX, "uniqueItems": True,
     "items": {"type": "string", "format": "uuid"}}
)  # fmt: skip
class RunIdsField(serializers.ListField):
    """1 to BULK_MAX distinct run ids."""

    def __init__(self, **kwargs: Any) -> None:
        too_many = f"at most {BULK_MAX} runs at once; select fewer"
        super().__init__(child=serializers.UUIDField(), min_length=1, max_length=BULK_MAX,
                         error_messages={"max_length": too_many,
                                         "min_length": "select at least one run"},
                         **kwargs)  # fmt: skip

    def to_internal_value(self, data: Any) -> list[str]:
        # The same text twice is refused, as the schema's uniqueItems says; two spellings
        # of one id ("…0A", "…0a") pass here and the second is refused in its result.
        if isinstance(data, list) and len(set(map(str, data))) != len(data):
            raise ValidationError("a run is named twice")
        return [str(value) for value in super().to_internal_value(data)]


class BulkRunsSerializer(serializers.Serializer[Any]):
    """One action on many runs; `reason` goes with a cancel."""

    action = serializers.ChoiceField(choices=[a.value for a in BulkAction])
    ids = RunIdsField()
    reason = reason_field()


class BulkRunResultSerializer(serializers.Serializer[Any]):
    """What happened to one run: done, or why not (`code` and a sentence in `error`)."""

    id = serializers.CharField()
    ok = serializers.BooleanField()
    code = serializers.CharField(allow_blank=True)
    error = serializers.CharField(allow_blank=True)


class BulkRunsSummarySerializer(serializers.Serializer[Any]):
    """A bulk action's counts and its per-run results, in the order asked."""

    action = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    refused = serializers.IntegerField()
    results = BulkRunResultSerializer(many=True)


def messages(errors: Any) -> str:
    """Return a serializer's error messages for one field as one sentence."""
    if isinstance(errors, dict):
        return "; ".join(f"item {key}: {messages(value)}" for key, value in errors.items())
    if isinstance(errors, list):
        return "; ".join(messages(error) for error in errors)
    return str(errors)


def invalid(form: serializers.Serializer[Any]) -> Response:
    """Return a 400 naming each field at fault: `{code, detail, fields: {name: message}}`."""
    fields = {name: messages(errors) for name, errors in form.errors.items()}
    detail = "; ".join(f"{name}: {text}" for name, text in fields.items())
    return Response({"code": "run.invalid", "detail": detail, "fields": fields}, status=400)


def refused(code: str, detail: str) -> dict[str, Any]:
    """Return a bulk result for a run the action did not apply to."""
    return {"ok": False, "code": code, "error": detail}


def cancel_one(run: Run, by: str, reason: str) -> dict[str, Any]:
    """Cancel one run of a bulk action, unless it finished."""
    if RunStatus(run.status).finished:
        return refused("run.finished", f"the run is {run.status}: nothing to cancel")
    durable.cancel(run, by, reason)
    return {"ok": True, "code": "", "error": ""}


def retry_one(run: Run, by: str) -> dict[str, Any]:
    """Retry one run of a bulk action, unless it cannot be retried."""
    try:
        durable.retry(str(run.pk), by)
    except durable.RetryRefused as refusal:
        return refused("run.not_retryable", f"{refusal} (the run is {run.status})")
    return {"ok": True, "code": "", "error": ""}


def act_on_runs(runs: QuerySet[Run], data: dict[str, Any], by: str) -> list[dict[str, Any]]:
    """Apply a bulk action to each run the caller may see; return one result per id."""
    found = {str(run.pk): run for run in runs.filter(pk__in=data["ids"])}
    results: list[dict[str, Any]] = []
    for run_id in data["ids"]:
        run = found.get(run_id)
        if any(result["id"] == run_id for result in results):
            result = refused("run.repeated", "this run is named earlier in the list")
        elif run is None:
            result = refused("not_found", "no such run, or not one you may see")
        elif data["action"] == BulkAction.CANCEL:
            result = cancel_one(run, by, data["reason"])
        else:
            result = retry_one(run, by)
        results.append({"id": run_id, **result})
    return results


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
    started = Run.objects.filter(started_by_id=user.pk).values("pk")
    asked = ApprovalRequest.objects.filter(groups__overlaps=list(group_names(user)))
    # One IN over the union, not `started_by = user OR id IN (asked)`: under the OR,
    # PostgreSQL tests the subquery run by run, and once the requests of the user's groups
    # outgrow work_mem it reads them all again for every run (at 300,000 runs and as many
    # requests, an approver's runs list ran for minutes; 80 ms this way).
    return runs.filter(pk__in=started.union(asked.values("run_id"), all=True))


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Run]):
    """Runs: admins see every run; everyone else the runs they started."""

    serializer_class = RunSerializer
    # Not "trace": the trace/ action is a method of that name, and DRF would route HTTP
    # TRACE to it and advertise it in Allow.
    http_method_names = ["get", "post", "head", "options"]

    def get_queryset(self) -> QuerySet[Run]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return Run.objects.none()
        runs = Run.objects.select_related("flow_version__flow", "started_by")
        return visible_runs(runs, self.request.user).order_by("-created_at")

    def get_permissions(self) -> list[BasePermission]:
        act = {"create": Act.START_RUNS, "cancel": Act.ADMINISTER_RUNS,
               "retry": Act.ADMINISTER_RUNS, "bulk": Act.ADMINISTER_RUNS,
               }.get(self.action, Act.READ_RUNS)  # fmt: skip
        return [Allowed.to(act)()]

    @extend_schema(parameters=FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        runs = filtered(self.get_queryset(), request.query_params.dict(), request.user)
        page = self.paginate_queryset(listed(runs))
        assert page is not None  # the API pages every list (REST_FRAMEWORK's settings)
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
        user, key = caller(request), request.headers.get("Idempotency-Key", "")
        if "Idempotency-Key" in request.headers and not IDEMPOTENCY_KEY.fullmatch(key):
            detail = "an Idempotency-Key is 1 to 255 visible ASCII characters"
            return Response({"code": "run.idempotency_key", "detail": detail}, status=400)
        form = StartSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        digest = start_digest(data) if key else ""
        if key and (answer := replayed(user, key, digest)) is not None:
            return answer
        try:
            version = services.latest_version(data["flow"], data.get("version"))
            graphs = services.resolve_graphs(version.graph)
        except services.RunRefused as refused:
            return Response({"code": "run.refused", "detail": str(refused)}, status=400)
        label = f"{version.flow.slug} v{version.number}"
        try:
            run = durable.create_run(graphs, label, data["input"], version, user,
                                     (key, digest))  # fmt: skip
        except InputRejected as rejected:
            body = {"code": "run.input", "detail": str(rejected), "fields": rejected.fields}
            return Response(body, status=400)
        except IntegrityError:
            # The same key, sent again while the first start was being stored: its run.
            if key and (answer := replayed(user, key, digest)) is not None:
                return answer
            raise
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=CancelSerializer,
        responses={202: RunSerializer, 409: OpenApiResponse(RefusalSerializer)},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel a run: every frame stops; the cancel is recorded with who asked and why.

        A reason over 500 characters is a 400 naming `reason` in `fields`; a finished run
        is a 409 `run.finished`.
        """
        run = self.get_object()
        form = CancelSerializer(data=request.data)
        if not form.is_valid():
            return invalid(form)
        if RunStatus(run.status).finished:
            detail = f"the run is {run.status}: nothing to cancel"
            return Response({"code": "run.finished", "detail": detail}, status=409)
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

    @extend_schema(
        operation_id="runs_bulk",
        request=BulkRunsSerializer,
        responses={200: BulkRunsSummarySerializer},
    )
    @action(detail=False, methods=["post"])
    def bulk(self, request: Request) -> Response:
        """Cancel or retry up to 100 runs; each is done (or refused) on its own.

        A run the caller may not see, a finished run (cancel) or a run no action's failure
        ended (retry) is refused in its result, and the others go on.
        """
        form = BulkRunsSerializer(data=request.data)
        if not form.is_valid():
            return invalid(form)
        data = form.validated_data
        results = act_on_runs(self.get_queryset(), data, request.user.get_username())
        done = sum(1 for result in results if result["ok"])
        summary = {"action": data["action"], "total": len(results), "done": done,
                   "refused": len(results) - done, "results": results}  # fmt: skip
        return Response(summary)
