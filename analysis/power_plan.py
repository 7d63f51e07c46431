"""What a power analysis is asked to do (analysis/power.py): plain Python, so the web process (the
admin's form, the services) can validate a plan without pandas or R."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class PowerPlan:
    sizes: tuple[int, ...] = (10, 20, 40, 80, 160)
    nsim: int = 100
    alpha: float = 0.05
    target: float = 0.8
    seed: int = 0
    # The people's effects to simulate instead of the pilot's (analysis/power_people.py): {factor: {level:
    # accuracy}}, every level of a factor named; a factor not named is simulated from the pilot's fit.
    stated: dict = field(default_factory=dict)
    # The people's own effects of each declared factor simulated too (issue 47 item 5); False: the model − human
    # contrasts alone, for a study whose question is only how the models differ from the people (each declared
    # factor is a set of simulated studies as long as the model − human one).
    people: bool = True

    def people_sets(self, people_factors: int) -> int:
        """How many sets of people's studies this plan runs for a study declaring `people_factors` factors."""
        return people_factors if self.people else 0

    @property
    def simulated(self) -> int:
        """Simulated participants of one set of studies: nsim studies at each size."""
        return self.nsim * sum(self.sizes)

    def studies(self, people_factors: int = 0) -> int:
        """Simulated studies one request runs: nsim at each size for the model − human contrasts, and as many again
        for the people's contrasts of each of `people_factors` declared factors (analysis/power_people.py)."""
        return self.nsim * len(self.sizes) * (1 + self.people_sets(people_factors))

    def participants(self, people_factors: int = 0) -> int:
        """Simulated participants one request asks for (what its run time grows with), the people's studies counted
        like the model − human ones (see `studies`)."""
        return self.simulated * (1 + self.people_sets(people_factors))

    def __post_init__(self) -> None:
        problems = []
        if not self.sizes or any((not isinstance(n, int)) or n < 2 for n in self.sizes):
            problems.append("sizes must be whole numbers of participants, each at least 2")
        if not 10 <= self.nsim <= 10_000:
            problems.append(f"nsim must be between 10 and 10000 simulated studies per size (got {self.nsim})")
        if not 0 < self.alpha < 0.5:
            problems.append(f"alpha must be between 0 and 0.5 (got {self.alpha})")
        if not 0 < self.target < 1:
            problems.append(f"target power must be between 0 and 1 (got {self.target})")
        if self.stated and not self.people:
            problems.append("a stated people's effect needs the people's effects simulated (not the models alone)")
        if self.stated:
            from experiments.participation import pilot_effects

            problems += pilot_effects.check_values(self.stated, pilot_effects.ACCURACY)
        if problems:
            raise ValueError("; ".join(problems))


def sizes_from_text(text: str) -> Sequence[int]:
    try:
        values = tuple(int(v) for v in text.replace(",", " ").split())
    except ValueError:
        raise ValueError(f"sizes must be whole numbers separated by spaces or commas (got {text!r})") from None
    return tuple(sorted(set(values)))


def check_budget(plan: PowerPlan, limit: int | None = None, *, people_factors: int = 0) -> None:
    """Refuse a plan asking for more simulated participants than the limit (DUET_POWER_MAX_SIMULATED):
    issue 26, a request of sizes 1000000 2000000 × nsim 10000, or 5,000 sizes, was queued. The people's
    studies of each of `people_factors` declared factors count like the model − human ones (issue 47)."""
    if limit is None:
        from common import env

        limit = env.power_max_simulated()
    asked = plan.participants(people_factors)
    people_factors = plan.people_sets(people_factors)
    if asked > limit:
        plural = "s" if people_factors != 1 else ""
        sets = (f" × {1 + people_factors} sets of studies: model − human, and the people's effects by each of the "
                f"study's {people_factors} declared factor{plural}" if people_factors else "")
        raise ValueError(
            f"This power analysis asks for {asked:,} simulated participants (nsim {plan.nsim} × the sizes' "
            f"sum {sum(plan.sizes):,}{sets}); one request may ask for at most {limit:,} (DUET_POWER_MAX_SIMULATED). "
            "Use fewer or smaller sizes, or fewer simulated studies per size.")
