"""`braid validate`, `braid import` and the demo flows `braid demo` loads."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from designer.demo import demo_documents
from designer.models import Flow, FlowVersion
from designer.services import check_graph
from tests.django.fixture_types import DemoUsers
from tests.django.graphs import BROKEN, GRAPH
from tests.processes import ROOT


def braid_validate(path: Path) -> subprocess.CompletedProcess[str]:
    """Run `manage.py braid validate PATH` in a fresh process."""
    return subprocess.run(
        [sys.executable, "manage.py", "braid", "validate", str(path)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def write(tmp_path: Path, name: str, content: object) -> Path:
    """Write a JSON (or raw text) file and return its path."""
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_validate_exits_0_and_prints_nothing_for_a_valid_file(tmp_path: Path) -> None:
    result = braid_validate(write(tmp_path, "ok.json", GRAPH))
    assert (result.returncode, result.stdout) == (0, "")


def test_validate_exits_1_with_one_json_error_per_line(tmp_path: Path) -> None:
    result = braid_validate(write(tmp_path, "broken.json", BROKEN))
    assert result.returncode == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines == [p.to_json() for p in check_graph(BROKEN).errors]
    assert {"code", "message", "node", "edge"} <= set(lines[0])


@pytest.mark.parametrize(
    ("content", "code"),
    [("{oops", "json.invalid"), ('{"a": 1, "a": 2}', "json.duplicate_key")],
)
def test_validate_reports_unreadable_json_as_one_error_line(
    tmp_path: Path, content: str, code: str
) -> None:
    result = braid_validate(write(tmp_path, "bad.json", content))
    assert result.returncode == 1
    assert [json.loads(line)["code"] for line in result.stdout.splitlines()] == [code]


def test_validate_reports_a_missing_file(tmp_path: Path) -> None:
    result = braid_validate(tmp_path / "absent.json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["code"] == "file.unreadable"


@pytest.mark.django_db
def test_import_with_publish_creates_the_flow_and_its_first_version(
    demo_users: DemoUsers, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "tiny.json", GRAPH)
    call_command("braid", "import", str(path), "--publish", "--user", "analyst")
    assert capsys.readouterr().out == "imported tiny, version 1\n"
    assert Flow.objects.get(slug="tiny").owner.username == "analyst"
    assert FlowVersion.objects.get().number == 1


@pytest.mark.django_db
def test_import_of_an_invalid_file_with_publish_exits_1_and_changes_nothing(
    demo_users: DemoUsers, tmp_path: Path
) -> None:
    path = write(tmp_path, "broken.json", {**BROKEN, "name": "Broken"})
    with pytest.raises(SystemExit) as exit_info:
        call_command("braid", "import", str(path), "--publish")
    assert exit_info.value.code == 1
    assert Flow.objects.count() == 0


@pytest.mark.parametrize(("slug", "document"), demo_documents(), ids=lambda value: str(value)[:24])
def test_every_demo_flow_is_valid_without_warnings(slug: str, document: object) -> None:
    report = check_graph(document)
    assert (report.errors, report.warnings) == ((), ())


@pytest.mark.django_db
def test_demo_publishes_each_demo_flow_once_however_often_it_runs() -> None:
    call_command("braid", "demo")
    call_command("braid", "demo")
    slugs = sorted(slug for slug, _ in demo_documents())
    assert sorted(Flow.objects.values_list("slug", flat=True)) == slugs
    assert FlowVersion.objects.count() == len(slugs) == 7
