# The OpenAI Agents SDK for Python (test/gateway/agents/python): a virtualenv under .cache with the
# pinned requirements, rebuilt only when they change. About 45 s and 120 MB on a cold machine.
PY_AGENTS_REQ  := test/gateway/agents/python/requirements.txt
PY_AGENTS_VENV := .cache/py-agents

.PHONY: python-agents test-prereqs

python-agents: $(PY_AGENTS_VENV)/.installed

$(PY_AGENTS_VENV)/.installed: $(PY_AGENTS_REQ)
	rm -rf $(PY_AGENTS_VENV)
	python3 -m venv $(PY_AGENTS_VENV)
	$(PY_AGENTS_VENV)/bin/pip install --quiet --disable-pip-version-check --no-input -r $(PY_AGENTS_REQ)
	touch $@

test-prereqs: python-agents
