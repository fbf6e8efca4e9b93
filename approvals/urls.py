from django.urls import path

from approvals import views

app_name = "approvals"
urlpatterns = [
    path("", views.index, name="index"),
    path("notifications/", views.notifications, name="notifications"),
]
