# Two entry points do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test torture bench lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Runtime install (stamp file re-made when pyproject.toml changes).
$(VENV)/.runtime: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# Runtime + dev dependencies (pytest, hypothesis, langchain-core).
$(VENV)/.dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.runtime

# An agent's environment where langchain-mcp-adapters pins the 1.x MCP SDK (mcp<2):
# archivist mcp runs there too (tests/test_mcp_sdk1.py).
$(VENV)/mcp1/.ready: pyproject.toml | $(BIN)/python
	$(PYTHON) -m venv $(VENV)/mcp1
	$(VENV)/mcp1/bin/python -m pip install --quiet -e '.[mcp]' 'mcp>=1.24,<2' 'langchain-mcp-adapters>=0.3,<0.4'
	touch $@

demo: $(VENV)/.runtime
	$(BIN)/archivist demo

test: $(VENV)/.dev $(VENV)/mcp1/.ready
	$(BIN)/python -m pytest -q

# The torture suite at full size; rewrites docs/reliability.md from what it measured.
torture: $(VENV)/.dev
	ARCHIVIST_TORTURE=full ARCHIVIST_TORTURE_REPORT=docs/reliability.md $(BIN)/python -m pytest -q -m torture

bench: $(VENV)/.dev
	$(BIN)/python bench/search_latency.py
	$(BIN)/python bench/keyword_planner_quality.py
	$(BIN)/python bench/keyword_timing_oracle.py
	$(BIN)/python bench/keyword_budget.py
	$(BIN)/python bench/assembly_latency.py
	$(BIN)/python bench/middleware_overhead.py
	$(BIN)/python bench/episodes_cost.py
	$(BIN)/python bench/hybrid_latency.py
	$(BIN)/python bench/forget_latency.py
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/backends.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
