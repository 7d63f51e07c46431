from django.contrib import admin
from django.urls import include, path

from demo.landing import landing

from common import documents
from .health import healthz

admin.site.site_header = "Duet — studies, items and runs"
admin.site.site_title = "Duet admin"
admin.site.site_url = "/"  # "View site": the landing page (participants arrive by their study link)

urlpatterns = [
    path("", landing, name="landing"),  # links to the admin, the docs and the demo study
    path("docs/", documents.index, name="docs"),  # the documentation's pages, the researcher's guide first
    path("docs/<str:name>", documents.doc, name="doc"),
    path("admin/prolific/", include("prolific.urls")),  # a study's Prolific page (issue 38)
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("s/", include("experiments.participation.urls")),  # the participant flow (issue 3)
]
