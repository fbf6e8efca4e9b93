"""`braid run`, `braid show` and `braid decide`: runs of both runtimes, from a terminal."""

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from designer.cli import print_lines, read_document
from engine.core.events import Decision
from engine.core.runtime import AmbiguousApproval, EventRefused, NoSuchApproval
from engine.core.state import RunState
from engine.core.store import UnknownRun
from engine.core.values import loads_strict
from engine.models import Timer
from runs import services
from web.documents import DocumentError
from web.output import Output


def print_report(report: dict[str, Any], as_json: bool, out: Output) -> None:
    """Print a run as JSON, or as a short table for people."""
    if as_json:
        out.write(json.dumps(report, ensure_ascii=False, sort_keys=True) + "\n")
        return
    out.write(f"run     {report['run']}\nstatus  {report['status']}\n")
    out.write(f"state   {json.dumps(report['state'], ensure_ascii=False, sort_keys=True)}\n")
    for path, color in report["colors"].items():
        row = report["nodes"].get(path, {})
        detail = f"  {row.get('execution_id', '')}  {json.dumps(row.get('result'))}" if row else ""
        out.write(f"  {color:<10} {path}{detail}\n")


def run_command(
    target: str, input_text: str, as_json: bool, out: Output, max_wait: float | None = None
) -> int:
    """Run a graph file or a flow slug's latest version; return the exit status."""
    try:
        input_value = loads_strict(input_text) if input_text else {}
    except ValueError as error:
        out.write(f"--input is not valid JSON: {error}\n")
        return 2
    try:
        state = start(target, input_value, max_wait)
    except DocumentError as error:
        print_lines([error.to_json()], out)
        return 1
    except services.RunRefused as refused:
        errors = refused.report.errors if refused.report else ()
        print_lines([problem.to_json() for problem in errors], out)
        out.write(f"{refused}\n")
        return 1
    print_report(services.report(state.run_id), as_json, out)
    if not as_json:
        print_handed_over(state.run_id, out)
    return 0


def print_handed_over(run_id: str, out: Output) -> None:
    """Say which timers the sweeper now owns, for a run handed to the durable runtime."""
    for key, due in (
        Timer.objects.filter(run_id=run_id).order_by("due_at").values_list("key", "due_at")
    ):
        node = key.split("|")[1] if key.count("|") >= 2 else key  # run|path|execution|timer
        out.write(
            f"timer   {node} fires at {due.isoformat()} under the sweeper "
            "(make run, or the scaled workers' beat)\n"
        )


def start(target: str, input_value: Any, max_wait: float | None = None) -> RunState:
    """Start a run of a file path or of a flow slug."""
    if Path(target).is_file():
        return services.start_run(read_document(target), Path(target).name, input_value,
                                  approval_timer_wait_s=max_wait)  # fmt: skip
    version = services.latest_version(target)
    label = f"{version.flow.slug} v{version.number}"
    return services.start_run(version.graph, label, input_value, flow_version=version,
                              approval_timer_wait_s=max_wait)  # fmt: skip


def show_command(run_id: str, as_json: bool, out: Output) -> int:
    """Print a stored run; return the exit status."""
    try:
        print_report(services.report(run_id), as_json, out)
    except UnknownRun:
        out.write(f"no run has the id {run_id!r}\n")
        return 1
    return 0


def decide_command(
    run_id: str, node: str, username: str, decision: str, comment: str, as_json: bool,
    out: Output, execution_id: str | None = None,
) -> int:  # fmt: skip
    """Decide an open approval as a user, let it take effect, print the run; return the status."""
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        out.write(f"no user named {username!r}\n")
        return 1
    try:
        decided = services.decide(
            run_id, node, user, Decision(decision), comment, execution_id=execution_id
        )
    except UnknownRun:
        out.write(f"no run has the id {run_id!r}\n")
        return 1
    except AmbiguousApproval as error:
        out.write(f"{error} (braid decide --execution EID)\n")
        return 1
    except (NoSuchApproval, EventRefused) as error:
        out.write(f"{error}\n")
        return 1
    if not services.follow(decided) and not as_json:
        waited = settings.BRAID_DECIDE_WAIT_S
        out.write(
            f"recorded; no worker applied it within {waited:g} s, so the run may not show it\n"
        )
    print_report(services.report(run_id), as_json, out)
    if not as_json:
        print_handed_over(run_id, out)
    return 0
