"""A production-style environment passes Django's deployment checks."""

from tests.processes import base_env, manage


def test_check_deploy_reports_no_issues_with_a_production_environment(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = base_env(
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="x7Qv!m2#Lp9@zR4$wK8^tN6&yB3*cF5(hJ1)dG0-sA_eU+iO=oP",
        DJANGO_ALLOWED_HOSTS="braid.example.com",
        BRAID_VAR_DIR=str(tmp_path),
    )
    output = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert output.strip() == "System check identified no issues (0 silenced)."


def test_production_mode_refuses_to_start_without_a_secret_key(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = base_env(DJANGO_DEBUG="0", BRAID_VAR_DIR=str(tmp_path))
    try:
        manage(env, "check")
    except AssertionError as failure:
        assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=0" in str(failure)
    else:
        raise AssertionError("check passed without DJANGO_SECRET_KEY")
