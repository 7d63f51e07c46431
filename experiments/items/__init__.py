"""The item machinery every design shares (issue 46 item 3): storing items (storage.py: bulk inserts, the rule that
items are immutable once a study has responses, the one rule for replacing a design's items), linked pairs and the
human variant (pairs.py, paired_batches.py), perturbed copies (perturbing.py: items_perturb asks each design's
`Design.perturb`), the published-format registry (sources/), bank files, their columns, mapping presets and bounded
reading (bank_files.py, bank_columns.py, presets.py, bounded_reading.py, uploads.py), the admin's upload pages
(admin_upload.py, admin_views.py, import_progress.py) and the human arm's defaults (arm_defaults.py).

The designs themselves are declared and made in their own folders (designs/<family>/, registered at start-up by
designs/apps.py); the core reaches them through the registry (experiments/design_registry/):

    from experiments import design_registry as registry
    registry.get(name).make(study=study, **options)   # a generated design; an imported one takes data=
"""
