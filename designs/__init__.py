"""Design packages (issue 36 item 1): one package per design family — modal/ (003's modal designs),
paired/ (RULEBREAKERS, dual-sided rules), multiple_choice/ (001) and csv_bank/ (any yes/no bank) — each
holding what is specific to that family: its frames and its report sections, registered into the design
registry (experiments/design_registry/__init__.py) when Django's apps are ready (designs/apps.py). analysis/ keeps
the generic engine and names no design; docs/designs.md says how to add one.
"""
