"""Which query terms collect keyword candidates, for every backend's keyword index.

Why a plan: a keyword query is scored over the facts that hold its terms, and a term
common in a large scope ("I", "work") holds most of them, so collecting every fact of
every term costs as much as the scope is large. The plan bounds the cost by the scope's
own counts: terms are taken rarest first while their facts fit a budget of
:data:`BUDGET` candidates; a term that does not fit whole is cut short (SQLite collects
its oldest facts up to the room left; PostgreSQL, whose index cannot stop early, leaves
it out unless no term fits); a term left out or cut short still adds its exact weight to
every candidate that holds it (reported as ``terms_dropped``). SQLite first collects the
facts holding every query term, up to half the budget (a term cut short could miss them
there); PostgreSQL finds them among the facts of its rarest collected term. On LoCoMo the plan changes no answer
(``bench/keyword_planner_quality.py``); what it keeps of an exact top 10 on a large scope,
and what it costs: ``bench/keyword_budget.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: candidates a keyword query may collect (the facts of its rarest terms)
BUDGET = 500


def plan_terms(terms: Sequence[str], df: Mapping[str, int], *, budget: int = BUDGET, spent: int = 0
               ) -> tuple[list[tuple[str, int]], list[str]]:
    """``(term, room)`` pairs, rarest first, while the budget (less what is ``spent``)
    lasts, and the terms collected whole (their facts fit the room they were given)."""
    plan, whole = [], []
    for term in sorted((t for t in terms if df.get(t)), key=lambda t: df[t]):
        room = budget - spent
        if room <= 0:
            break
        plan.append((term, room))
        if df[term] <= room:
            whole.append(term)
        spent += df[term]
    return plan, whole
