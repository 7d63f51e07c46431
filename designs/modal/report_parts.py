"""What 003's modal designs add to the design registry at start-up (designs/apps.py): their report parts in
the report's order — Eq. (4)–(6) and Figure 4, Appendix C.1 and C.2, humans and models in one model —
and Table 1 read on the real modal syllogisms alone where a study has them (their factors' levels and labels are
declared with the designs themselves: Design.factor_levels)."""
from __future__ import annotations

from experiments import design_registry as registry

from .forms import DISTRIBUTION, NECESSITATION, SYLLOGISMS
from .mixed import AGENTS, DISTRIBUTION as DISTRIBUTION_SPEC, EQ4, EQ5, EQ6, NECESSITATION as NECESSITATION_SPEC
from .sequents import SEQUENTS


def register() -> None:
    for part, designs in ((EQ4, [SYLLOGISMS]), (EQ5, [SYLLOGISMS]), (EQ6, [SYLLOGISMS]), (SEQUENTS, [SYLLOGISMS]),
                          (NECESSITATION_SPEC, [NECESSITATION]), (DISTRIBUTION_SPEC, [DISTRIBUTION]),
                          (AGENTS, [SYLLOGISMS])):
        registry.report_part_add(part, designs=designs)
    registry.analysed_alone_add(SYLLOGISMS)  # 003's Table 1 reads its real syllogisms
