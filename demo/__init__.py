"""The demo (`manage.py demo`): sets up a study, its model arm and a first pilot report, and serves.
It drives every app — experiments, inference, analysis — so it sits above them all; no app imports it."""
