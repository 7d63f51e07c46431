"""The demo (`manage.py demo`): sets up a study, its model arm and a first pilot report, and serves.
It drives every app — experiments, inference, analysis — so it sits above them all; no app imports it.
The landing page at `/` (landing.py) links the demo study once it is set up."""

DEMO_SLUG = "modal-syllogisms-demo"  # the demo study's short name: `manage.py demo` makes it, `/` links it
