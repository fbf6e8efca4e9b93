from django.urls import path

from tokens import views

app_name = "tokens"
urlpatterns = [path("", views.index, name="index")]
