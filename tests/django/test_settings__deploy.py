"""A production-style environment passes Django's deployment checks; defaults are safe."""

import stat
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.processes import base_env, manage


def test_check_deploy_reports_no_issues_with_a_production_environment(tmp_path: Path) -> None:
    env = base_env(
        DJANGO_SECRET_KEY="x7Qv!m2#Lp9@zR4$wK8^tN6&yB3*cF5(hJ1)dG0-sA_eU+iO=oP",
        DJANGO_ALLOWED_HOSTS="braid.example.com",
        DJANGO_HTTPS="1",
        BRAID_VAR_DIR=str(tmp_path),
    )
    output = manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert output.strip() == "System check identified no issues (0 silenced)."


def test_without_a_secret_key_one_is_made_once_in_var_readable_by_the_owner_only(
    tmp_path: Path,
) -> None:
    env = base_env(BRAID_VAR_DIR=str(tmp_path))
    env.pop("DJANGO_SECRET_KEY", None)
    script = "from django.conf import settings; print(settings.SECRET_KEY)"
    first = manage(env, "shell", "-v", "0", "-c", script).strip()
    second = manage(env, "shell", "-v", "0", "-c", script).strip()
    key_file = tmp_path / "secret-key"
    assert first == second == key_file.read_text().strip()
    assert len(first) >= 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600


def test_processes_that_make_the_key_at_once_all_start_with_the_same_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Procfile's processes on a fresh checkout: one of the peers benchmark's workers read
    the file between another's create and write, found it empty and refused to start.

    The processes fork from a fork server, a single-threaded interpreter of their own: a
    fork of the test process (threaded by the suite's servers) could inherit a lock held by
    another thread and hang. The server imports braid.settings once, which makes its own
    key under the BRAID_VAR_DIR set here, not in the checkout's var/.
    """
    import multiprocessing

    from braid.settings import local_secret_key

    monkeypatch.setenv("BRAID_VAR_DIR", str(tmp_path / "server-var"))
    path = tmp_path / "keys" / "secret-key"
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["braid.settings"])
    for _ in range(20):
        path.unlink(missing_ok=True)
        with context.Pool(8) as pool:
            keys = pool.map(local_secret_key, [path] * 32)
        assert set(keys) == {path.read_text().strip()}
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["secret-key"]


def test_without_hard_links_the_key_file_is_created_exclusively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from braid import settings

    def no_links(*_: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr("braid.settings.os.link", no_links)
    path = tmp_path / "secret-key"
    key = settings.local_secret_key(path)
    assert len(key) >= 50
    assert settings.local_secret_key(path) == key == path.read_text().strip()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["secret-key"]


def test_debug_is_off_unless_django_debug_is_1(tmp_path: Path) -> None:
    env = base_env(BRAID_VAR_DIR=str(tmp_path))
    env.pop("DJANGO_DEBUG", None)
    script = "from django.conf import settings; print(settings.DEBUG)"
    assert manage(env, "shell", "-v", "0", "-c", script).strip() == "False"
    assert manage({**env, "DJANGO_DEBUG": "1"}, "shell", "-v", "0", "-c", script).strip() == "True"


@pytest.mark.django_db
def test_a_missing_page_lists_no_url_patterns(client: Client) -> None:
    client.force_login(_user())
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    assert b"URLconf" not in response.content
    assert b"api/" not in response.content


def _user() -> User:
    return User.objects.create(username="someone")
