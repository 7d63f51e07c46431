from django.urls import path

from . import questionnaire_views, views

app_name = "participant"

urlpatterns = [
    path("<slug:slug>/", views.entry, name="entry"),
    path("<slug:slug>/preview/", views.preview, name="preview"),
    path("<slug:slug>/incompatible/", views.incompatible, name="incompatible"),
    path("<slug:slug>/p/<str:token>/", views.session, name="session"),
    path("<slug:slug>/p/<str:token>/consent", views.consent, name="consent"),
    path("<slug:slug>/p/<str:token>/instructions", views.instructions, name="instructions"),
    path("<slug:slug>/p/<str:token>/no-keyboard", views.no_keyboard, name="no_keyboard"),
    path("<slug:slug>/p/<str:token>/practice", views.practice, name="practice"),
    path("<slug:slug>/p/<str:token>/trial", views.trial, name="trial"),
    path("<slug:slug>/p/<str:token>/heartbeat", views.heartbeat, name="heartbeat"),
    path("<slug:slug>/p/<str:token>/finish", views.finish, name="finish"),
    path("<slug:slug>/p/<str:token>/answer", questionnaire_views.answer, name="answer"),
    path("<slug:slug>/p/<str:token>/questionnaire", questionnaire_views.submit, name="questionnaire"),
]
