"""Who a single sign-on is in Braid: the user of the identity, made at the first login, and
their Braid groups from the groups claim (docs/sso.md).

A person is known by the issuer and `sub` of their tokens (SingleSignOnIdentity), never by a
name alone: a first login whose user name is already taken by an account not linked to that
identity is refused, so a provider account called `admin` cannot take over Braid's `admin`.
"""

import logging
from collections.abc import Mapping

from django.contrib.auth.models import Group, User
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from braid.models import SingleSignOnIdentity
from braid.sso.config import SsoConfig

LOG = logging.getLogger("braid.sso")
USERNAME_MAX = 150  # django.contrib.auth's User.username
NAME_MAX = 150  # User.first_name and last_name
EMAIL_MAX = 254


class Refused(Exception):
    """A login the provider vouched for that Braid does not accept; the message says why, to
    the person."""


def sign_in(config: SsoConfig, issuer: str, claims: Mapping[str, object]) -> User:
    """Return the user of the identity in the claims, made at its first login, with their
    profile and Braid groups brought up to date; raise Refused with the reason."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject or len(subject) > 255:
        raise Refused("the identity provider sent no usable subject (sub) for you")
    try:
        with transaction.atomic():
            user = linked_user(config, issuer, subject, claims)
            update_profile(user, claims)
            groups = set_groups(user, config, claims.get(config.groups_claim))
    except IntegrityError:  # a second first login of the same person won the race
        raise Refused("another login of this account was under way; try again") from None
    LOG.info("single sign-on: %s (%s) logged in with groups %s", user.username, subject, groups)
    return user


def linked_user(config: SsoConfig, issuer: str, subject: str, claims: Mapping[str, object]) -> User:
    """Return the identity's user, making both at the first login; refuse a deactivated one."""
    identity = (
        SingleSignOnIdentity.objects.select_related("user")
        .select_for_update()
        .filter(issuer=issuer, subject=subject)
        .first()
    )
    if identity is None:
        user = new_user(config, claims)
        identity = SingleSignOnIdentity.objects.create(user=user, issuer=issuer, subject=subject)
    if not identity.user.is_active:
        raise Refused(f"the Braid account {identity.user.username!r} is deactivated")
    identity.last_login_at = timezone.now()
    identity.save(update_fields=["last_login_at"])
    return identity.user


def new_user(config: SsoConfig, claims: Mapping[str, object]) -> User:
    """Make the user of a first login, without a usable password; refuse a taken name."""
    username = username_of(config, claims)
    if User.objects.filter(username__iexact=username).exists():
        subject = claims["sub"]
        LOG.warning(
            "single sign-on: refused %r (subject %r): a user of that name exists, unlinked",
            username, subject,
        )  # fmt: skip
        raise Refused(
            f"a Braid account named {username!r} already exists and is not linked to your "
            f"sign-on; an admin can link it to your subject {subject!r} (Django admin, Single "
            "sign-on identities)"
        )
    user = User(username=username)
    user.set_unusable_password()
    user.save()
    return user


def username_of(config: SsoConfig, claims: Mapping[str, object]) -> str:
    """Return the user name a first login gets: the username claim, else the subject."""
    value = claims.get(config.username_claim)
    name = value.strip() if isinstance(value, str) and value.strip() else str(claims["sub"])
    try:
        UnicodeUsernameValidator()(name)
    except ValidationError:
        name_ok = False
    else:
        name_ok = len(name) <= USERNAME_MAX
    if not name_ok:
        raise Refused(
            f"{name[:USERNAME_MAX]!r} cannot be a Braid user name (at most {USERNAME_MAX} "
            "letters, digits and @.+-_); an admin may set BRAID_OIDC_USERNAME_CLAIM to another "
            "claim"
        )
    return name


def update_profile(user: User, claims: Mapping[str, object]) -> None:
    """Copy the email (approval notifications go to it) and names from the claims."""
    fields = {"email": ("email", EMAIL_MAX), "first_name": ("given_name", NAME_MAX),
              "last_name": ("family_name", NAME_MAX)}  # fmt: skip
    changed = []
    for field, (claim, limit) in fields.items():
        value = claims.get(claim)
        if isinstance(value, str) and len(value) <= limit and getattr(user, field) != value:
            setattr(user, field, value)
            changed.append(field)
    if changed:
        user.save(update_fields=changed)


def set_groups(user: User, config: SsoConfig, claimed: object) -> list[str]:
    """Make the user's groups among those the map names exactly those the claim maps to;
    leave other groups, which admins manage in Braid, as they are. Return the user's groups."""
    managed = config.managed_groups()
    wanted = config.braid_groups(claimed)
    held = set(user.groups.filter(name__in=managed).values_list("name", flat=True))
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
    if wanted - held:
        user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in wanted - held))
    return sorted(user.groups.values_list("name", flat=True))
