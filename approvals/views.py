from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def index(request: HttpRequest) -> HttpResponse:
    """Render the approvals page, which says honestly what it holds today."""
    return render(request, "approvals/index.html")
