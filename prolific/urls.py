from django.urls import path

from .admin_views import prolific_page

app_name = "prolific"
urlpatterns = [path("<int:pk>/", prolific_page, name="page")]
