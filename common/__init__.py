"""The ground floor: helpers every app uses (environment, jobs, the one way out, rate limits, registries,
admin display, uploads, documents). Nothing here imports an app; studyserver/ (settings, urls, wsgi) wires
them together on top."""
