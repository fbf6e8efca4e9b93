"""The REST API: each app registers its viewsets on one router."""

from rest_framework.routers import DefaultRouter

from designer.api import FlowViewSet
from engine.api import RunViewSet

router = DefaultRouter()
router.register("flows", FlowViewSet, basename="flow")
router.register("runs", RunViewSet, basename="run")

urlpatterns = router.urls
