from django.urls import path

from monitor import views

app_name = "monitor"
urlpatterns = [
    path("", views.index, name="index"),
    path("<uuid:run_id>/", views.detail, name="detail"),
]
