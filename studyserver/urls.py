from django.contrib import admin
from django.urls import include, path

from .health import healthz

admin.site.site_header = "Duet — studies, items and runs"
admin.site.site_title = "Duet admin"
admin.site.site_url = None  # no public site behind "View site" (participants arrive by their study link)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("s/", include("experiments.participation.urls")),  # the participant flow (issue 3)
]
