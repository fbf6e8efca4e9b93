"""The REST API: each app registers its viewsets on one router."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from approvals.api import ApprovalViewSet, NotificationSettingsView
from designer.api import ActionCatalogViewSet, FlowViewSet
from monitor.api import RunMonitorViewSet
from runs.api import RunViewSet
from runs.test_run_api import FlowTestRunViewSet
from tokens.api import TokenViewSet

router = DefaultRouter()
router.register("flows", FlowViewSet, basename="flow")
router.register("flows", FlowTestRunViewSet, basename="flow-test")
router.register("runs", RunViewSet, basename="run")
router.register("runs", RunMonitorViewSet, basename="run-monitor")
router.register("approvals", ApprovalViewSet, basename="approval")
router.register("actions", ActionCatalogViewSet, basename="action")
router.register("tokens", TokenViewSet, basename="token")

urlpatterns = [
    path("me/notifications/", NotificationSettingsView.as_view(), name="notification-settings"),
    *router.urls,
]
