"""The REST API: each app registers its viewsets on one router."""

from rest_framework.routers import DefaultRouter

router = DefaultRouter()

urlpatterns = router.urls
