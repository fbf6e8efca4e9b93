"""The REST API: each app registers its viewsets on one router."""

from rest_framework.routers import DefaultRouter

from designer.api import FlowViewSet

router = DefaultRouter()
router.register("flows", FlowViewSet, basename="flow")

urlpatterns = router.urls
