"""REST API for approval requests: the caller's open ones, one request, and deciding it."""

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from approvals import services
from approvals.models import ApprovalRequest
from braid.auth import Role, group_names, has_role
from braid.schema import RefusalSerializer
from engine.core.events import Decision


class ApprovalSerializer(serializers.ModelSerializer):
    """An approval request as approvers see it."""

    run = serializers.UUIDField(source="run_id", read_only=True)
    flow = serializers.SerializerMethodField()
    runtime = serializers.CharField(source="run.runtime", read_only=True)
    groups = serializers.ListField(child=serializers.CharField(), read_only=True)
    policy = serializers.JSONField(read_only=True)

    class Meta:
        model = ApprovalRequest
        fields = [
            "id", "run", "flow", "runtime", "node", "execution_id", "groups", "policy", "title",
            "instructions", "status", "outcome", "created_at", "closed_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_flow(self, approval: ApprovalRequest) -> str | None:
        version = approval.run.flow_version
        return version.flow.slug if version else None


class DecideSerializer(serializers.Serializer):
    """One approver's answer."""

    decision = serializers.ChoiceField(choices=[d.value for d in Decision])
    comment = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class CanSeeRequest(BasePermission):
    """Members of a request's groups and admins may read it; deciding checks the groups."""

    message = "You are in none of this request's groups."

    def has_object_permission(self, request: Request, view: object, obj: ApprovalRequest) -> bool:
        if getattr(view, "action", None) == "decide":
            return True  # the decision itself refuses outsiders, admins included (403)
        if has_role(request.user, Role.ADMINS):
            return True
        return bool(set(group_names(request.user)) & set(obj.groups))


REFUSED_STATUS = {
    services.NotAnApprover: status.HTTP_403_FORBIDDEN,
    services.StarterMayNotDecide: status.HTTP_403_FORBIDDEN,
}


class ApprovalViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Approval requests: the caller's open ones, newest first (admins: every open one)."""

    serializer_class = ApprovalSerializer
    permission_classes = [IsAuthenticated, CanSeeRequest]

    def get_queryset(self) -> QuerySet[ApprovalRequest]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return ApprovalRequest.objects.none()
        if self.action == "list":
            return services.open_requests(self.request.user)
        return ApprovalRequest.objects.select_related("run__flow_version__flow")

    def retrieve(self, request: Request, *args: object, **kwargs: object) -> Response:
        """One request; an approver's first look at an open one is audited (`viewed`)."""
        approval = self.get_object()
        services.record_view(approval, request.user)
        return Response(self.get_serializer(approval).data)

    @extend_schema(
        request=DecideSerializer,
        responses={
            202: ApprovalSerializer,
            400: OpenApiResponse(description="the body is not a decision"),
            403: OpenApiResponse(
                RefusalSerializer,
                description="not in the request's groups, or the run's starter (segregation "
                "of duties: code approval.starter)",
            ),
            409: OpenApiResponse(
                RefusalSerializer, description="closed, already decided, or an in-process run"
            ),
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
                approval, request.user, Decision(answer["decision"]), answer["comment"]
            )
        except services.DecisionRefused as refused:
            http_status = REFUSED_STATUS.get(type(refused), status.HTTP_409_CONFLICT)
            return Response({"code": refused.code, "detail": str(refused)}, status=http_status)
        return Response(ApprovalSerializer(approval).data, status=status.HTTP_202_ACCEPTED)
