from django.contrib import admin
from django.urls import path

admin.site.site_header = "Duet — studies, items and runs"
admin.site.site_title = "Duet admin"

urlpatterns = [
    path("admin/", admin.site.urls),
]
