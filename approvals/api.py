"""REST API for approval requests: the inbox, the archive, the count, one request, and
deciding (one or many), delegating and reassigning. Refusals are `{code, detail}`."""

from typing import TYPE_CHECKING, Any

from django.db.models import Q, QuerySet
from django.utils import timezone
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from approvals import audit, notify, refusals, services
from approvals.context import request_context
from approvals.models import ApprovalRequest, ApprovalStatus, EventKind
from engine.core.events import Decision
from web.api_errors import ID_MAX
from web.auth import caller, group_names
from web.permissions import Act, Allowed
from web.schema import RefusalSerializer


class ShownSerializer(serializers.Serializer[Any]):
    """One value the node shows approvers: the expression and its value at the request."""

    field = serializers.CharField()
    value = serializers.JSONField(allow_null=True)


class DecisionEntrySerializer(serializers.Serializer[Any]):
    """One person's recorded decision, from the audit."""

    user = serializers.CharField()
    decision = serializers.ChoiceField(choices=[d.value for d in Decision])
    comment = serializers.CharField(allow_blank=True)
    at = serializers.DateTimeField()


class InputFieldSerializer(serializers.Serializer[Any]):
    """One top-level field of the run's input, as short text (long values cut, "… N more")."""

    field = serializers.CharField()
    text = serializers.CharField()


class ContextSerializer(serializers.Serializer[Any]):
    """Who started the run, when, the flow and version, and (without `show`) its input."""

    started_by = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField()
    flow = serializers.CharField(allow_null=True)
    flow_name = serializers.CharField()
    version = serializers.IntegerField(allow_null=True)
    input = InputFieldSerializer(many=True, allow_null=True, help_text="null when `show` is set")
    input_more = serializers.IntegerField(help_text="input fields left out")


class WhyNotSerializer(serializers.Serializer[Any]):
    """Why the caller may not decide an open request they see: a code and a sentence."""

    code = serializers.CharField()
    text = serializers.CharField()


class ApprovalSerializer(serializers.ModelSerializer[ApprovalRequest]):
    """An approval request as approvers see it."""

    run = serializers.UUIDField(source="run_id", read_only=True)
    flow = serializers.SerializerMethodField()
    runtime = serializers.CharField(source="run.runtime", read_only=True)
    groups = serializers.ListField(child=serializers.CharField(), read_only=True)
    policy = serializers.JSONField(read_only=True)
    shown = ShownSerializer(many=True, read_only=True)
    overdue = serializers.SerializerMethodField()
    assignee = serializers.CharField(
        source="assignee.get_username", read_only=True, default=None, allow_null=True
    )
    delegations = serializers.ListField(
        child=serializers.DictField(), read_only=True, help_text='[{"from", "to", "groups"}]'
    )
    may_decide = serializers.SerializerMethodField()
    why_not = serializers.SerializerMethodField()
    if not TYPE_CHECKING:  # DRF takes declared fields off the class; to mypy this one would
        context = serializers.SerializerMethodField()  # hide the serializer's own `context`
    decisions = serializers.SerializerMethodField()

    class Meta:
        model = ApprovalRequest
        fields = [
            "id", "run", "flow", "runtime", "node", "execution_id", "groups", "policy", "title",
            "instructions", "shown", "status", "outcome", "created_at", "due_at", "overdue",
            "closed_at", "assignee", "delegations", "may_decide", "why_not", "context", "decisions",
        ]  # fmt: skip
        read_only_fields = fields

    def get_flow(self, approval: ApprovalRequest) -> str | None:
        version = approval.run.flow_version
        return version.flow.slug if version else None

    def get_overdue(self, approval: ApprovalRequest) -> bool:
        """Open and past its due time."""
        due = approval.due_at
        return approval.status == ApprovalStatus.OPEN and due is not None and due <= timezone.now()

    def caller_groups(self) -> tuple[str, ...]:
        """Return the caller's group names, read once per serialization."""
        shared = self.context
        assert isinstance(shared, dict)  # the view's context, shared by a list's serializers
        groups = shared.get("groups")
        if groups is None:
            groups = shared["groups"] = group_names(shared["request"].user)
        return tuple(groups)

    def get_may_decide(self, approval: ApprovalRequest) -> bool:
        """Whether the caller may decide it now."""
        request = self.context.get("request")
        if request is None:
            return False
        return services.may_decide(approval, request.user, self.caller_groups())

    @extend_schema_field(WhyNotSerializer(allow_null=True))
    def get_why_not(self, approval: ApprovalRequest) -> dict[str, str] | None:
        """Why the caller may not decide this open request (null: they may, or it is closed)."""
        request = self.context.get("request")
        if request is None:
            return None
        found = services.why_not(approval, request.user, self.caller_groups())
        return None if found is None else {"code": found.code, "text": found.text}

    @extend_schema_field(ContextSerializer)
    def get_context(self, approval: ApprovalRequest) -> dict[str, Any]:
        """Who started the run, when, the flow and version, and its input (without `show`).

        One ContextSerializer serves a whole listing: building one per request (its fields
        deep-copied each time) cost the inbox's page of 500 about 0.1 s."""
        shared = self.context
        assert isinstance(shared, dict)  # the view's context, shared by a list's serializers
        serializer = shared.get("context_serializer")
        if serializer is None:
            serializer = shared["context_serializer"] = ContextSerializer()
        return serializer.to_representation(request_context(approval))

    @extend_schema_field(DecisionEntrySerializer(many=True))
    def get_decisions(self, approval: ApprovalRequest) -> list[dict[str, Any]]:
        """Who decided what and when (from the audit)."""
        history = self.context.get("history")
        if history is None:
            history = audit.history([approval.pk])
        return [
            {"user": e.actor, "decision": e.detail.get("decision"),
             "comment": e.detail.get("comment", ""), "at": e.at}
            for e in history.get(approval.pk, []) if e.kind == EventKind.DECIDED
        ]  # fmt: skip


class DecideSerializer(serializers.Serializer[Any]):
    """One approver's answer; `execution_id`, when given, must be the request's."""

    decision = serializers.ChoiceField(choices=[d.value for d in Decision])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    execution_id = serializers.CharField(required=False, max_length=2000)


@extend_schema_field(
    {"type": "array", "minItems": 1, "maxItems": 500, "uniqueItems": True,
     "items": {"type": "integer", "minimum": 1, "maximum": ID_MAX}}
)  # fmt: skip
class RequestIdsField(serializers.ListField):
    """1 to 500 distinct request ids, each one an id the database can hold."""

    def __init__(self, **kwargs: Any) -> None:
        child = serializers.IntegerField(min_value=1, max_value=ID_MAX)
        super().__init__(child=child, min_length=1, max_length=500, **kwargs)


class BulkDecideSerializer(serializers.Serializer[Any]):
    """One answer for many requests, each recorded on its own."""

    ids = RequestIdsField()
    decision = serializers.ChoiceField(choices=[d.value for d in Decision])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)

    def validate_ids(self, value: list[int]) -> list[int]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("ids repeat")
        return value


class BulkResultSerializer(serializers.Serializer[Any]):
    """What happened to one request of a bulk decision."""

    id = serializers.IntegerField()
    result = serializers.ChoiceField(choices=["done", "refused"])
    code = serializers.CharField(allow_blank=True)
    detail = serializers.CharField(allow_blank=True)


class BulkSummarySerializer(serializers.Serializer[Any]):
    """A bulk decision's summary and its per-request results, in the order asked."""

    total = serializers.IntegerField()
    done = serializers.IntegerField()
    refused = serializers.IntegerField()
    results = BulkResultSerializer(many=True)


class HandOverSerializer(serializers.Serializer[Any]):
    """Who receives a request (a user name), and why."""

    to = serializers.CharField(max_length=150)
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class CountSerializer(serializers.Serializer[Any]):
    """The caller's open requests: how many they may decide, and how many of those are overdue."""

    open = serializers.IntegerField()
    overdue = serializers.IntegerField()


def refusal(refused: refusals.DecisionRefused) -> Response:
    """Return a refusal as `{code, detail}` with its status."""
    return Response({"code": refused.code, "detail": str(refused)}, status=refused.http_status)


FILTERS = [
    OpenApiParameter("status", str, enum=["open", "closed"], description="default: open"),
    OpenApiParameter("flow", str, description="flow slug"),
    OpenApiParameter("group", str, description="one of the request's groups"),
    OpenApiParameter("overdue", str, enum=["true", "false"]),
    OpenApiParameter("q", str, description="words in the title, instructions or node"),
]
REFUSED_403 = OpenApiResponse(
    RefusalSerializer,
    description="may not act on it: not in its groups (approval.not_an_approver), the run's "
    "starter (approval.starter), delegated away (approval.delegated) or reassigned to "
    "someone else (approval.assigned)",
)
CONFLICT_409 = OpenApiResponse(
    RefusalSerializer,
    description="closed or already decided by others (approval.closed), decided by you "
    "(approval.already_decided), a stale execution id (approval.stale), an in-process "
    "run (approval.in_process), a delegation after which too few people could meet the "
    "policy (approval.would_strand), or a reassignment while the request still needs more "
    "than one person (approval.needs_people)",
)
TARGET_400 = OpenApiResponse(
    RefusalSerializer,
    description="the body is invalid, or the person named may not receive it: not active "
    "(approval.delegate_inactive), yourself (approval.delegate_self), in none of the part's "
    "groups (approval.delegate_not_member), the run's starter (approval.delegate_is_starter), "
    "already decided (approval.delegate_decided), holding another seat "
    "(approval.delegate_holds_seat), earlier in the chain (approval.delegation_cycle), or "
    "having passed their own part on (approval.delegate_passed_on)",
)


class ApprovalViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[ApprovalRequest]
):
    """Approval requests: the caller's open ones, newest first (admins: every open one).

    One request (reading, deciding, delegating, reassigning) is looked up among those the
    caller may see, so another's request answers 404 whatever its state, as one that does
    not exist: a 403 or a 409 would say that it exists, and the services' refusals name its
    execution id or its outcome. The services refuse those who see it but may not act (403).
    """

    serializer_class = ApprovalSerializer
    permission_classes = [IsAuthenticated]

    def get_queryset(self) -> QuerySet[ApprovalRequest]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return ApprovalRequest.objects.none()
        if self.action == "list":
            return self.filtered(self.request.query_params)
        return services.visible_requests(self.request.user, self.groups())

    def groups(self) -> tuple[str, ...]:
        """Return the caller's group names, read once per request."""
        if not hasattr(self, "_groups"):
            self._groups = group_names(self.request.user)
        return self._groups

    def filtered(self, params: Any) -> QuerySet[ApprovalRequest]:
        """Return the inbox or the archive with the query's filters."""
        user, groups = self.request.user, self.groups()
        wanted = params.get("status", "open")
        if wanted not in ("open", "closed"):
            raise ValidationError({"status": "open or closed"})
        if wanted == "open":
            requests = services.open_requests(user, groups)
        else:
            requests = services.closed_requests(user, groups)
        if params.get("flow"):
            requests = requests.filter(run__flow_version__flow__slug=params["flow"])
        if params.get("group"):
            requests = requests.filter(groups__overlaps=[params["group"]])
        if params.get("overdue") not in (None, "true", "false"):
            raise ValidationError({"overdue": "true or false"})
        if params.get("overdue") == "true":
            requests = requests.filter(due_at__lte=timezone.now())
        elif params.get("overdue") == "false":
            requests = requests.filter(Q(due_at__isnull=True) | Q(due_at__gt=timezone.now()))
        for word in params.get("q", "").split()[:8]:
            requests = requests.filter(
                Q(title__icontains=word) | Q(instructions__icontains=word) | Q(node__icontains=word)
            )
        return requests

    def get_serializer_context(self) -> dict[str, Any]:
        context = dict(super().get_serializer_context())  # a fresh dict each call, as DRF's
        if getattr(self, "swagger_fake_view", False) or not self.request:
            return context
        if self.request.user.is_authenticated:
            context["groups"] = self.groups()
        return context

    def with_history(self, approvals: list[ApprovalRequest]) -> dict[str, Any]:
        """Return a serializer context carrying the audit of these requests (one query)."""
        context = self.get_serializer_context()
        context["history"] = audit.history(a.pk for a in approvals)
        return context

    @extend_schema(parameters=FILTERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        """The inbox (`status=open`, newest first) or the archive (`status=closed`)."""
        page = self.paginate_queryset(self.get_queryset())
        assert page is not None
        serializer = ApprovalSerializer(page, many=True, context=self.with_history(page))
        return self.get_paginated_response(serializer.data)

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """One request; an approver's first look at an open one is audited (`viewed`)."""
        approval = self.get_object()
        services.record_view(approval, caller(request))
        return Response(ApprovalSerializer(approval, context=self.with_history([approval])).data)

    @extend_schema(
        request=DecideSerializer,
        responses={
            202: ApprovalSerializer,
            400: OpenApiResponse(description="the body is not a decision"),
            403: REFUSED_403,
            409: CONFLICT_409,
        },
    )
    @action(detail=True, methods=["post"])
    def decide(self, request: Request, pk: str) -> Response:
        """Approve or reject: recorded now, applied by the run's next step."""
        approval = self.get_object()
        form = DecideSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        answer = form.validated_data
        try:
            services.decide_request(
                approval, caller(request), Decision(answer["decision"]), answer["comment"],
                answer.get("execution_id"), self.groups(),
            )  # fmt: skip
        except refusals.DecisionRefused as refused:
            return refusal(refused)
        context = self.with_history([approval])
        return Response(ApprovalSerializer(approval, context=context).data, status=202)

    @extend_schema(
        operation_id="approvals_decide_many",
        request=BulkDecideSerializer,
        responses={
            200: BulkSummarySerializer,
            400: OpenApiResponse(description="the body is not a list of ids and a decision"),
        },
    )
    @action(detail=False, methods=["post"], url_path="decide")
    def bulk_decide(self, request: Request) -> Response:
        """Decide many requests at once; each is recorded (or refused) on its own."""
        form = BulkDecideSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        answer = form.validated_data
        results = services.bulk_decide(
            answer["ids"], caller(request), Decision(answer["decision"]), answer["comment"]
        )
        done = sum(1 for r in results if r.result == "done")
        summary = {
            "total": len(results), "done": done, "refused": len(results) - done,
            "results": [{"id": r.id, "result": r.result, "code": r.code, "detail": r.detail}
                        for r in results],
        }  # fmt: skip
        return Response(summary)

    @extend_schema(responses=CountSerializer)
    @action(detail=False, methods=["get"])
    def count(self, request: Request) -> Response:
        """How many open requests the caller may decide (the navigation bar's badge)."""
        mine = ApprovalRequest.objects.filter(services.actionable(request.user, self.groups()))
        overdue = mine.filter(due_at__lte=timezone.now()).count()
        return Response({"open": mine.count(), "overdue": overdue})

    @extend_schema(
        request=HandOverSerializer,
        responses={
            200: ApprovalSerializer,
            400: TARGET_400,
            403: REFUSED_403,
            409: CONFLICT_409,
        },
    )
    @action(detail=True, methods=["post"])
    def delegate(self, request: Request, pk: str) -> Response:
        """Pass your part of a request to another member of one of its groups."""
        approval = self.get_object()
        form = HandOverSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        answer = form.validated_data
        try:
            services.delegate(approval, caller(request), answer["to"], answer["comment"])
        except refusals.DecisionRefused as refused:
            return refusal(refused)
        return Response(ApprovalSerializer(approval, context=self.with_history([approval])).data)

    @extend_schema(
        request=HandOverSerializer,
        responses={
            200: ApprovalSerializer,
            400: TARGET_400,
            403: OpenApiResponse(RefusalSerializer, description="admins only"),
            409: CONFLICT_409,
        },
    )
    @action(detail=True, methods=["post"], permission_classes=[Allowed.to(Act.REASSIGN_APPROVALS)])
    def reassign(self, request: Request, pk: str) -> Response:
        """An admin gives the whole request to one person, who then alone decides it."""
        approval = self.get_object()
        form = HandOverSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        answer = form.validated_data
        try:
            services.reassign(approval, caller(request), answer["to"], answer["comment"])
        except refusals.DecisionRefused as refused:
            return refusal(refused)
        return Response(ApprovalSerializer(approval, context=self.with_history([approval])).data)


class NotificationSettingsSerializer(serializers.Serializer[Any]):
    """The caller's approval emails: on or off."""

    email_requests = serializers.BooleanField(
        help_text="email me when a request is assigned to me or one of my groups, or "
        "delegated or reassigned to me"
    )


SETTINGS_400 = OpenApiResponse(
    RefusalSerializer,
    description='notifications.invalid: the body is not {"email_requests": true|false}; '
    "`fields` names each wrong field",
)


def settings_errors(body: object) -> dict[str, str]:
    """Return what is wrong with a settings body, by field (empty: nothing)."""
    if not isinstance(body, dict):
        return {"body": 'a JSON object such as {"email_requests": false}'}
    if not isinstance(body.get("email_requests"), bool):
        return {"email_requests": "true or false"}
    return {}


class NotificationSettingsView(APIView):
    """The caller's approval email setting (docs/approvals.md, "Notifications")."""

    permission_classes = [IsAuthenticated]
    serializer_class = NotificationSettingsSerializer

    @extend_schema(responses=NotificationSettingsSerializer)
    def get(self, request: Request) -> Response:
        """Whether the caller gets approval emails."""
        return Response({"email_requests": notify.emails_on(request.user)})

    @extend_schema(
        request=NotificationSettingsSerializer,
        responses={200: NotificationSettingsSerializer, 400: SETTINGS_400},
    )
    def put(self, request: Request) -> Response:
        """Turn approval emails on or off; anything but a boolean is a 400 naming the field
        (other keys are ignored, as everywhere in the API)."""
        errors = settings_errors(request.data)
        if errors:
            detail = "; ".join(f"{field}: {why}" for field, why in errors.items())
            body = {"code": "notifications.invalid", "detail": detail, "fields": errors}
            return Response(body, status=400)
        data = request.data
        assert isinstance(data, dict)  # settings_errors refused anything but an object
        notify.set_emails(request.user, data["email_requests"])
        return Response({"email_requests": data["email_requests"]})
