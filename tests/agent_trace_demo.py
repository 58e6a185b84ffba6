"""One agent call whose trace has an expired fact, facts ranked beyond k and facts
dropped for budget (used by test_cli to check `trace list --thread` and `trace why`).

    python tests/agent_trace_demo.py DB
"""

import sys
import time
from datetime import UTC, datetime, timedelta

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from scripted_models import ScriptedToolModel

from archivist import Memory
from archivist.integrations.langchain import MemoryContext, MemoryMiddleware


def main(db: str) -> None:
    mem = Memory.open(db)
    scope = mem.scope(user="alice")
    scope.remember("The user's gym membership at FitLife renews in March.",
                   valid_until=datetime.now(UTC) + timedelta(seconds=1))
    for i in range(12):
        scope.remember(f"The user trains at the gym on weekday {i} with a long warm-up routine of stretching, "
                       f"rowing and light squats before the main lifts, number {i}.")
    time.sleep(1.2)  # the membership fact expires
    mw = MemoryMiddleware(mem, budget=330, reserve=30)
    model = ScriptedToolModel(messages=iter([AIMessage("Sure.")]), seen=[], bound=[])
    agent = create_agent(model, tools=[], middleware=[mw], context_schema=MemoryContext)
    agent.invoke({"messages": [HumanMessage("When does my gym membership renew, and what is my gym routine?")]},
                 context=MemoryContext(user_id="alice", thread_id="gym-1"))
    mw.close()
    mem.close()


if __name__ == "__main__":
    main(sys.argv[1])
