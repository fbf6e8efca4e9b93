"""`python manage.py braid <subcommand>`: the command line of Braid."""

import sys
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.migrations.executor import MigrationExecutor

from approvals.cli import verify_command
from braid.cli import decide_command, run_command, show_command
from braid.demo import DEMO_USERS, create_demo_users
from designer.cli import import_file, validate_file
from designer.demo import load_demo_flows

# Subcommands that read or write runs: on a database that was never migrated they would end
# in a traceback ("no such table"), so they say what to run instead.
NEEDS_TABLES = frozenset({"run", "show", "decide", "import", "audit"})
NOT_MIGRATED = (
    "The database has no Braid tables yet (or misses some migrations): "
    "run `.venv/bin/python manage.py migrate` first (or `make run`).\n"
)


def migrated() -> bool:
    """Return whether every migration is applied to the default database."""
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        executor = MigrationExecutor(connection)
        return not executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        return False


class Command(BaseCommand):
    help = "Braid's command line: demo, serve, validate, import, run, show, decide, audit."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)
        demo = sub.add_parser("demo", help="create demo groups, users and missing demo flows")
        demo.add_argument(
            "--refresh", action="store_true",
            help="replace existing demo flows with this Braid's (their drafts are kept)",
        )  # fmt: skip
        serve = sub.add_parser("serve", help="serve on Daphne with the embedded worker")
        serve.add_argument("--host", default="127.0.0.1")
        serve.add_argument("--port", type=int, default=8000)
        validate = sub.add_parser("validate", help="validate a braid.graph/1 file")
        validate.add_argument("file")
        load = sub.add_parser("import", help="import a braid.graph/1 file as a flow draft")
        load.add_argument("file")
        load.add_argument("--slug", default="", help="default: made from the graph's name")
        load.add_argument("--user", default="admin", help="the owner and publisher")
        load.add_argument("--publish", action="store_true", help="also publish a version")
        run = sub.add_parser("run", help="run a graph file or a flow's latest version")
        run.add_argument("target", metavar="FILE|SLUG")
        run.add_argument("--input", default="", help="the run's input as JSON")
        run.add_argument("--json", action="store_true", dest="as_json")
        run.add_argument(
            "--max-wait", type=float, default=60.0, metavar="SECONDS", dest="max_wait",
            help="also wait out a timer racing an approval when it is due within SECONDS",
        )  # fmt: skip
        show = sub.add_parser("show", help="show a stored run")
        show.add_argument("run_id", metavar="RUN")
        show.add_argument("--json", action="store_true", dest="as_json")
        decide = sub.add_parser("decide", help="approve or reject an open approval")
        decide.add_argument("run_id", metavar="RUN")
        decide.add_argument("node", metavar="NODE")
        decide.add_argument("--user", required=True)
        decide.add_argument("decision", choices=["approve", "reject"])
        decide.add_argument("--comment", default="")
        decide.add_argument(
            "--execution", metavar="EID", dest="execution_id", default=None,
            help="the execution id, when several approvals are open at NODE (foreach items)",
        )  # fmt: skip
        decide.add_argument("--json", action="store_true", dest="as_json")
        audit = sub.add_parser("audit", help="check the approval audit's hash chain")
        audit.add_argument("action", choices=["verify"])

    def handle(self, *args: Any, **options: Any) -> None:
        subcommand = options["subcommand"]
        if subcommand in NEEDS_TABLES and not migrated():
            self.stdout.write(NOT_MIGRATED)
            sys.exit(2)
        status = getattr(self, f"handle_{subcommand}")(**options)
        if status:
            sys.exit(status)

    def handle_demo(self, refresh: bool, **options: Any) -> int:
        create_demo_users()
        for line in load_demo_flows(refresh=refresh).report():
            self.stdout.write(line)
        self.stdout.write("Demo logins (user / password / groups):")
        for demo in DEMO_USERS:
            self.stdout.write(f"  {demo.username:<9} {demo.password:<15} {', '.join(demo.groups)}")
        return 0

    def handle_serve(self, host: str, port: int, **options: Any) -> int:
        # Deferred: importing Daphne installs Twisted's asyncio reactor, which only
        # `serve` may do; every other subcommand runs without it.
        from braid.serve import serve

        serve(host, port)
        return 0

    def handle_validate(self, file: str, **options: Any) -> int:
        return validate_file(file, self.stdout, self.stderr)

    def handle_import(self, file: str, slug: str, user: str, publish: bool, **options: Any) -> int:
        return import_file(file, user, slug, publish, self.stdout)

    def handle_run(
        self, target: str, input: str, as_json: bool, max_wait: float, **options: Any
    ) -> int:
        return run_command(target, input, as_json, self.stdout, max_wait)

    def handle_show(self, run_id: str, as_json: bool, **options: Any) -> int:
        return show_command(run_id, as_json, self.stdout)

    def handle_audit(self, action: str, **options: Any) -> int:
        return verify_command(self.stdout)

    def handle_decide(self, run_id: str, node: str, user: str, decision: str, comment: str,
                      as_json: bool, execution_id: str | None, **options: Any) -> int:  # fmt: skip
        return decide_command(
            run_id, node, user, decision, comment, as_json, self.stdout, execution_id
        )
