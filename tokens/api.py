"""REST API for personal API tokens: list, create (the secret shown once), revoke.

Everyone manages their own tokens; admins also list and revoke anyone's. Another person's
token answers 404 to a non-admin, as one that does not exist. docs/tokens.md has the why.
"""

import datetime as dt
from typing import Any

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from tokens import services
from tokens.models import ApiToken
from web.auth import caller
from web.permissions import Act, Allowed, allows, who
from web.schema import RefusalSerializer

LONGEST_DAYS = 3650  # ten years: the furthest expiry a token may be given


class TokenSerializer(serializers.ModelSerializer[ApiToken]):
    """A token as listed: never its secret, which only the answer that made it carries."""

    user = serializers.CharField(source="user.get_username", read_only=True)
    expired = serializers.SerializerMethodField(help_text="whether it is refused for its age")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "user", "created_at", "expires_at", "last_used_at",
                  "expired"]  # fmt: skip
        read_only_fields = fields

    def get_expired(self, token: ApiToken) -> bool:
        return token.expires_at is not None and token.expires_at <= timezone.now()


class IssuedSerializer(TokenSerializer):
    """A token just made, with its secret: shown this once, never again."""

    token = serializers.CharField(
        read_only=True, help_text="the secret to send as `Authorization: Bearer <token>`"
    )

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token"]
        read_only_fields = fields


class NewTokenSerializer(serializers.Serializer[Any]):
    """What a new token takes: a name and, at most one of, an expiry."""

    name = serializers.CharField(max_length=100, help_text="what the token is for")
    expires_in_days = serializers.IntegerField(
        required=False, min_value=1, max_value=LONGEST_DAYS, help_text="expire after this many days"
    )
    expires_at = serializers.DateTimeField(
        required=False, help_text="expire at this time (in the future, within ten years)"
    )

    def validate_expires_at(self, value: dt.datetime) -> dt.datetime:
        now = timezone.now()
        if value <= now:
            raise ValidationError("must be in the future")
        if value > now + dt.timedelta(days=LONGEST_DAYS):
            raise ValidationError(f"must be within {LONGEST_DAYS:,} days")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "expires_in_days" in attrs and "expires_at" in attrs:
            raise ValidationError({"expires_at": "give expires_in_days or expires_at, not both"})
        return attrs

    def expiry(self) -> dt.datetime | None:
        """Return when the validated token expires (None: never)."""
        data = self.validated_data
        if "expires_in_days" in data:
            return timezone.now() + dt.timedelta(days=data["expires_in_days"])
        expires_at: dt.datetime | None = data.get("expires_at")
        return expires_at


LIST_PARAMETERS = [
    OpenApiParameter("all", OpenApiTypes.BOOL, description="admins: every user's tokens"),
    OpenApiParameter("user", str, description="admins: this user's tokens (a user name)"),
]
CREATE_403 = OpenApiResponse(
    RefusalSerializer,
    description="token.not_with_token: the request was authenticated by a token; tokens are "
    "made while logged in or with Basic auth, so that a leaked token cannot outlive itself",
)
CREATE_409 = OpenApiResponse(
    RefusalSerializer, description="token.limit: the caller holds BRAID_TOKENS_PER_USER tokens"
)


class TokenViewSet(
    mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet[ApiToken]
):
    """Personal API tokens: the caller's own (admins: anyone's, on asking), newest first.

    Revoked tokens are not listed; expired ones are, marked `expired`, until revoked.
    """

    serializer_class = TokenSerializer
    permission_classes = [Allowed.to(Act.USE_TOKENS)]
    lookup_value_regex = "[0-9]{1,18}"  # any longer is no id: a JSON 404, never an overflow

    def get_queryset(self) -> QuerySet[ApiToken]:
        if getattr(self, "swagger_fake_view", False):  # drf-spectacular's schema pass
            return ApiToken.objects.none()
        user = caller(self.request)
        tokens = ApiToken.objects.filter(revoked_at__isnull=True).select_related("user")
        if self.action == "list":
            return self.listed(tokens, user)
        if allows(user, Act.ADMINISTER_TOKENS):
            return tokens
        return tokens.filter(user=user)

    def listed(self, tokens: QuerySet[ApiToken], user: User) -> QuerySet[ApiToken]:
        """Return the tokens the list's query asks for, refusing others' to non-admins."""
        params = self.request.query_params
        everyone = params.get("all", "false")
        if everyone not in ("true", "false"):
            raise ValidationError({"all": "true or false"})
        named = params.get("user")
        if (everyone == "true" or named not in (None, user.get_username())) and not allows(
            user, Act.ADMINISTER_TOKENS
        ):
            raise PermissionDenied(
                f"Your role ({who(user).value}) may not {Act.ADMINISTER_TOKENS.value}."
            )
        if named is not None:
            return tokens.filter(user__username=named)
        return tokens if everyone == "true" else tokens.filter(user=user)

    @extend_schema(parameters=LIST_PARAMETERS)
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        """The caller's tokens; admins may ask for everyone's (`all=true`) or one user's."""
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=NewTokenSerializer,
        responses={201: IssuedSerializer, 403: CREATE_403, 409: CREATE_409},
    )
    def create(self, request: Request) -> Response:
        """Make a token for the caller; the answer carries its secret, this once only."""
        if isinstance(request.auth, ApiToken):
            detail = "a token may not make tokens; make one while logged in, or with Basic auth"
            raise PermissionDenied(detail, code="token.not_with_token")
        form = NewTokenSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            token, secret = services.issue(caller(request), form.validated_data["name"],
                                           form.expiry())  # fmt: skip
        except services.IssueRefused as refused:
            body = {"code": refused.code, "detail": refused.detail}
            return Response(body, status=refused.status)
        body = {**TokenSerializer(token).data, "token": secret}
        # The secret must not stay in a cache between here and the person.
        return Response(body, status=status.HTTP_201_CREATED, headers={"Cache-Control": "no-store"})

    @extend_schema(responses={204: None})
    def destroy(self, request: Request, *args: object, **kwargs: object) -> Response:
        """Revoke a token: refused from now on, and no longer listed."""
        services.revoke(self.get_object(), by=caller(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
