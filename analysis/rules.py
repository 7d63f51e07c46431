"""The report's rules a researcher sets in study.settings live one layer down, in
experiments/report_rules.py, where the study's settings editor reads them too (an app never imports
upward into analysis; issue 29 item 4). Re-exported here for the analysis modules."""
from experiments.report_rules import (  # noqa: F401
    ALTERNATIVES, EXCLUSION_SETTINGS, PAIRED_REPORT, Exclusions, exclusion_settings, paired_report_options,
)
