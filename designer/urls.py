from django.urls import path

from designer import views

app_name = "designer"
urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:slug>/", views.detail, name="detail"),
]
