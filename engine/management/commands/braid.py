"""`python manage.py braid <subcommand>`: the command line of Braid."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from braid.demo import DEMO_USERS, create_demo_users


class Command(BaseCommand):
    help = "Braid's command line: demo, serve."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="subcommand", required=True)
        sub.add_parser("demo", help="create demo groups, users and flows (idempotent)")
        serve = sub.add_parser("serve", help="serve on Daphne with the embedded worker")
        serve.add_argument("--host", default="127.0.0.1")
        serve.add_argument("--port", type=int, default=8000)

    def handle(self, *args: Any, **options: Any) -> None:
        getattr(self, f"handle_{options['subcommand']}")(**options)

    def handle_demo(self, **options: Any) -> None:
        create_demo_users()
        self.stdout.write("Demo logins (user / password / groups):")
        for demo in DEMO_USERS:
            self.stdout.write(f"  {demo.username:<9} {demo.password:<15} {', '.join(demo.groups)}")

    def handle_serve(self, host: str, port: int, **options: Any) -> None:
        from braid.serve import serve

        serve(host, port)
