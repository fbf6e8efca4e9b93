"""REST API for flows: /api/flows/ with validate, publish, versions, import and export."""

from typing import TYPE_CHECKING, Any

from django.db.models import Max, QuerySet
from django.http import Http404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from jsonschema import Draft202012Validator
from jsonschema import ValidationError as JsonSchemaError
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from designer import services
from designer.models import Flow, FlowVersion
from designer.schema import GRAPH_SCHEMA, PROBLEM_SCHEMA, REPORT_SCHEMA
from web.api_errors import NUMBER_MAX, bounded
from web.auth import caller
from web.documents import NUL_REFUSED, holds_nul
from web.permissions import Act, Allowed
from web.schema import ERROR

GRAPH_SHAPE = Draft202012Validator(GRAPH_SCHEMA)


@extend_schema_field(GRAPH_SCHEMA)
class GraphField(serializers.JSONField):
    """A braid.graph/1 document of the schema's shape; validate/publish check the rules.

    A draft may break the graph rules (it is a draft), but never the documented shape, so
    what the API returns always matches its own schema.
    """

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("a graph must be a JSON object")
        if holds_nul(value):
            raise serializers.ValidationError(NUL_REFUSED)
        problems = sorted(GRAPH_SHAPE.iter_errors(value), key=lambda e: list(e.absolute_path))
        if problems:
            raise serializers.ValidationError([shape_problem(p) for p in problems[:20]])
        return value


def shape_problem(problem: JsonSchemaError) -> str:
    """Say where a document breaks the schema and how."""
    where = ".".join(str(part) for part in problem.absolute_path) or "the document"
    return f"{where}: {problem.message}"


class TextField(serializers.CharField):
    """A string field that refuses numbers and booleans instead of turning them into text."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class FlowSerializer(serializers.ModelSerializer[Flow]):
    """A flow with its draft; the slug is fixed at creation."""

    owner = serializers.CharField(source="owner.get_username", read_only=True)
    draft = GraphField()
    latest_version = serializers.IntegerField(
        source="latest_number", read_only=True, allow_null=True
    )
    name = TextField(max_length=200, required=False, allow_blank=True)

    class Meta:
        model = Flow
        fields = [
            "slug", "name", "owner", "draft", "revision", "latest_version",
            "created_at", "updated_at",
        ]  # fmt: skip
        read_only_fields = ["revision", "created_at", "updated_at"]
        # A taken slug is the service's 409 (flow.slug_taken), not a field error.
        extra_kwargs: dict[str, dict[str, Any]] = {"slug": {"validators": []}}


class FlowUpdateSerializer(FlowSerializer):
    """A flow's draft and name as an update takes them: the slug is fixed at creation."""

    base_revision = serializers.IntegerField(
        write_only=True,
        required=False,
        min_value=1,
        max_value=NUMBER_MAX,
        help_text="the draft revision this edit started from; a save from an older revision "
        "is a 409 (flow.draft_conflict) carrying the stored draft and its revision",
    )
    keep_replaced = serializers.BooleanField(
        write_only=True,
        default=False,
        help_text="keep the draft being replaced in the flow's draft history",
    )

    class Meta(FlowSerializer.Meta):
        fields = [*FlowSerializer.Meta.fields, "base_revision", "keep_replaced"]
        read_only_fields = ["slug", "revision", "created_at", "updated_at"]


class FlowVersionSerializer(serializers.ModelSerializer[FlowVersion]):
    """One immutable published version."""

    flow: serializers.SlugRelatedField[Flow] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    published_by = serializers.CharField(source="published_by.get_username", read_only=True)
    graph = GraphField(read_only=True)

    class Meta:
        model = FlowVersion
        fields = ["flow", "number", "graph", "content_hash", "published_by", "published_at"]
        read_only_fields = fields


class ImportSerializer(serializers.Serializer[Any]):
    """An exported document to import, with an optional slug and publish flag."""

    graph = GraphField()
    slug = serializers.SlugField(required=False, allow_blank=True, max_length=100)
    publish = serializers.BooleanField(default=False)
    replace = serializers.BooleanField(
        default=False,
        help_text="make the document the draft of an existing flow with the slug (its "
        "current draft is kept in its history); without it an existing slug is a 409",
    )


# The API's error body, plus the validator's report when a document was at fault.
REFUSAL = {
    **ERROR,
    "description": "A refused change: a code, a sentence, and the validator's report if any.",
    "properties": {
        **ERROR["properties"],
        "errors": {"type": "array", "items": PROBLEM_SCHEMA},
        "warnings": {"type": "array", "items": PROBLEM_SCHEMA},
    },
}


# A save refused because the draft moved on: the stored draft and revision come along, so
# that the editor can show both and let the person choose.
CONFLICT = {
    **REFUSAL,
    "description": "The draft was saved elsewhere since base_revision.",
    "properties": {
        **REFUSAL["properties"],
        "revision": {"type": "integer"},
        "draft": GRAPH_SCHEMA,
        "updated_at": {"type": "string", "format": "date-time"},
    },
}


def refusal(error: services.FlowError, status_code: int) -> Response:
    """Return a refused change as {code, detail[, errors, warnings]}."""
    body: dict[str, object] = {"code": error.code, "detail": error.message}
    if error.report is not None:
        body |= error.report.to_json()
    return Response(body, status=status_code)


def document_to_validate(request: Request, flow: Flow) -> object:
    """Return the posted graph (bare or as {"graph": ...}), or the saved draft when empty."""
    data = request.data
    if not data:
        return flow.draft
    if isinstance(data, dict) and set(data) == {"graph"}:
        return data["graph"]
    return data


class FlowViewSet(viewsets.ModelViewSet[Any]):  # Any: it pages versions too
    """Flows by slug: CRUD of the draft, validation, publishing and versions."""

    serializer_class = FlowSerializer
    permission_classes = [Allowed.to(Act.EDIT_FLOWS, read=Act.READ_FLOWS)]
    lookup_field = "slug"

    def get_serializer_class(self) -> type[FlowSerializer]:
        if self.action in {"update", "partial_update"}:
            return FlowUpdateSerializer
        return FlowSerializer

    def get_queryset(self) -> QuerySet[Flow]:
        return Flow.objects.select_related("owner").annotate(latest_number=Max("versions__number"))

    def perform_create(self, serializer: serializers.BaseSerializer[Flow]) -> None:
        data = serializer.validated_data
        flow = services.create_flow(
            caller(self.request), data["slug"], data["draft"], data.get("name", "")
        )
        serializer.instance = self.get_queryset().get(pk=flow.pk)

    @extend_schema(responses={201: FlowSerializer, 409: OpenApiResponse(REFUSAL)})
    def create(self, request: Request, *args: object, **kwargs: object) -> Response:
        try:
            return super().create(request, *args, **kwargs)
        except services.SlugTaken as error:
            return refusal(error, status.HTTP_409_CONFLICT)

    def perform_update(self, serializer: serializers.BaseSerializer[Flow]) -> None:
        data = serializer.validated_data
        flow = serializer.instance
        assert flow is not None  # an update's serializer holds the flow it updates
        services.save_draft(
            flow, data.get("draft", flow.draft), data.get("name", ""),
            base_revision=data.get("base_revision"), user=caller(self.request),
            keep_replaced=data.get("keep_replaced", False),
        )  # fmt: skip

    @extend_schema(responses={200: FlowSerializer, 409: OpenApiResponse(CONFLICT)})
    def update(self, request: Request, *args: object, **kwargs: object) -> Response:
        try:
            return super().update(request, *args, **kwargs)
        except services.DraftConflict as error:
            body = {
                "code": error.code,
                "detail": error.message,
                "revision": error.flow.revision,
                "draft": error.flow.draft,
                "updated_at": error.flow.updated_at.isoformat(),
            }
            return Response(body, status=status.HTTP_409_CONFLICT)

    @extend_schema(responses={200: FlowSerializer, 409: OpenApiResponse(CONFLICT)})
    def partial_update(self, request: Request, *args: object, **kwargs: object) -> Response:
        kwargs["partial"] = True
        return self.update(request, *args, **kwargs)

    @extend_schema(responses={204: None, 409: OpenApiResponse(REFUSAL)})
    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        try:
            services.delete_flow(self.get_object())
        except services.FlowInUse as error:
            return refusal(error, status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        # Any JSON: validating a malformed document is what this is for (a report, not a 400).
        request={"application/json": {"description": "a braid.graph/1 document, or {graph}"}},
        responses={200: OpenApiResponse(response=REPORT_SCHEMA)},
    )
    @action(detail=True, methods=["post"])
    def validate(self, request: Request, slug: str) -> Response:
        """Validate the posted graph, or the saved draft when the body is empty."""
        report = services.check_graph(document_to_validate(request, self.get_object()))
        return Response(report.to_json())

    @extend_schema(
        request=None,
        responses={
            201: FlowVersionSerializer,
            200: FlowVersionSerializer,
            400: OpenApiResponse(REFUSAL, description="the draft does not validate"),
        },
    )
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, slug: str) -> Response:
        """Publish the draft as the next version (an unchanged draft returns the latest)."""
        try:
            published = services.publish(self.get_object(), caller(request))
        except services.PublishRefused as error:
            return refusal(error, status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_201_CREATED if published.created else status.HTTP_200_OK
        return Response(FlowVersionSerializer(published.version).data, status=code)

    def versions_read(self) -> QuerySet[FlowVersion]:
        """The flow's versions with what FlowVersionSerializer reads joined, not the flow's
        draft, which it does not read."""
        flow: Flow = self.get_object()
        return flow.versions.select_related("flow", "published_by").defer("flow__draft")

    @extend_schema(responses=FlowVersionSerializer(many=True))
    @action(detail=True, methods=["get"])
    def versions(self, request: Request, slug: str) -> Response:
        """List the flow's published versions, newest first."""
        page = self.paginate_queryset(self.versions_read().order_by("-number"))
        return self.get_paginated_response(FlowVersionSerializer(page, many=True).data)

    @extend_schema(responses=FlowVersionSerializer)
    @action(detail=True, methods=["get"], url_path=r"versions/(?P<number>[0-9]+)")
    def version(self, request: Request, slug: str, number: str) -> Response:
        """Return one published version by its number."""
        version = self.versions_read().filter(number=int(number)).first()
        if version is None:
            raise Http404(f"{slug} has no version {number}")
        return Response(FlowVersionSerializer(version).data)

    @extend_schema(
        responses={200: OpenApiResponse(response=GRAPH_SCHEMA)},
        parameters=[
            OpenApiParameter(
                "version",
                {"type": "integer", "minimum": 1, "maximum": NUMBER_MAX},
                description="a published version number",
            )
        ],
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, slug: str) -> Response:
        """Return the draft (or ?version=n) as a braid.graph/1 document to save as a file."""
        flow = self.get_object()
        number = request.query_params.get("version")
        if number is None:
            graph = flow.draft
        else:
            version = flow.versions.filter(number=bounded("version", number, 1, NUMBER_MAX)).first()
            if version is None:
                raise Http404(f"{slug} has no version {number}")
            graph = version.graph
        disposition = f'attachment; filename="{flow.slug}.json"'
        return Response(graph, headers={"Content-Disposition": disposition})

    @extend_schema(
        request={"application/json": {"description": "a braid.graph/1 document, or {graph}"}},
        responses={200: OpenApiResponse(response=REPORT_SCHEMA)},
    )
    @action(detail=False, methods=["post"], url_path="import/check")
    def check(self, request: Request) -> Response:
        """Validate a document before importing it; nothing is stored."""
        data = request.data
        document = data["graph"] if isinstance(data, dict) and set(data) == {"graph"} else data
        return Response(services.check_graph(document).to_json())

    @extend_schema(
        request=ImportSerializer,
        responses={
            201: FlowSerializer,
            409: OpenApiResponse(REFUSAL),
        },
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_(self, request: Request) -> Response:
        """Import a document as a new flow or as the new draft of the flow with its slug."""
        form = ImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            flow, _ = services.import_graph(
                caller(request), data["graph"], data.get("slug", ""),
                publish_it=data["publish"], replace=data["replace"],
            )  # fmt: skip
        except services.SlugTaken as error:
            return refusal(error, status.HTTP_409_CONFLICT)
        except services.FlowError as error:
            return refusal(error, status.HTTP_400_BAD_REQUEST)
        body = FlowSerializer(self.get_queryset().get(pk=flow.pk)).data
        return Response(body, status=status.HTTP_201_CREATED)


class ActionParamSerializer(serializers.Serializer[Any]):
    """One parameter an action takes."""

    name = serializers.CharField()
    types = serializers.ListField(child=serializers.CharField(), help_text="Python type names")
    if not TYPE_CHECKING:  # DRF takes declared fields off the class; to mypy this one would
        required = serializers.BooleanField()  # hide the field's own `required` flag


class ActionSerializer(serializers.Serializer[Any]):
    """A registered action, as a task node's `action` names it."""

    name = serializers.CharField()
    outcomes = serializers.ListField(child=serializers.CharField())
    params = ActionParamSerializer(many=True)


def type_names(expected: type | tuple[type, ...]) -> list[str]:
    """Return the names of the types a param accepts (`object` means any JSON value)."""
    types = expected if isinstance(expected, tuple) else (expected,)
    return [kind.__name__ for kind in types]


def describe_actions() -> list[dict[str, object]]:
    """Return every registered action with its outcomes and params, sorted by name."""
    from engine.actions import ACTIONS

    return [
        {
            "name": spec.name,
            "outcomes": sorted(spec.outcomes, key=lambda o: (o != "next", o)),
            "params": [
                {"name": param, "types": type_names(kind), "required": param in spec.required}
                for param, kind in spec.params.items()
            ],
        }
        for spec in sorted(ACTIONS.specs.values(), key=lambda spec: spec.name)
    ]


class ActionCatalogViewSet(viewsets.ViewSet):
    """The actions this deployment registers, for the designer's action picker."""

    permission_classes = [Allowed.to(Act.READ_FLOWS)]

    @extend_schema(responses=ActionSerializer(many=True))
    def list(self, request: Request) -> Response:
        """List the registered actions with their outcomes and params."""
        return Response(describe_actions())
