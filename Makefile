# Every target sets up its own environment (.venv) first; nothing else is needed on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: demo test test-unit lint bench bench-serve bench-web bench-milvus serve eval train docs clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## demo: index the bundled zh/en corpus and play the scripted conversations (offline, no key)
demo: $(STAMP)
	$(VENV)/bin/convsearch demo

# pytest-xdist workers: most of the suite waits (loopback servers, subprocesses, Milvus), so more workers than
# cores pays; TEST_WORKERS=0 runs in one process
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS) --dist loadgroup

## test: the whole suite (unit, integration, e2e; tests/unit/test_lint.py runs ruff and mypy too), in parallel
## workers, with PostgreSQL and Redis started for the run where installed (scripts/test-services.sh)
test: $(STAMP)
	bash scripts/test-services.sh $(PY) -m pytest $(XDIST)

## test-unit: the unit tier only (no server, no database), in one process: ~40 s, where 4 xdist workers took ~65 s
test-unit: $(STAMP)
	$(PY) -m pytest tests/unit -q

## lint: ruff over the tree (config and baseline in pyproject.toml) and mypy --strict over its target list
lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

## bench: speed benchmarks → docs/BENCHMARKS.md
bench: $(STAMP)
	$(PY) bench/run.py

## bench-serve: HTTP load benchmark (/v1/search, concurrency 32, 30 s per row) → docs/BENCHMARKS_SERVE.md
bench-serve: $(STAMP)
	$(PY) bench/serve.py

## bench-web: web search under load (replay servers, time scaled 10×, ~2 min) → docs/BENCHMARKS_WEB.md
bench-web: $(STAMP)
	$(PY) bench/web.py

## bench-milvus: Milvus Lite vs the local index (100,000 docs, 500 queries, hashed vectors; retrieval eval; ~20 min on 2 busy cores) → docs/BENCHMARKS_MILVUS.md
bench-milvus: $(STAMP)
	$(PY) bench/milvus.py --docs 100000 --queries 500 --vectors hash --scale 5000,20000

## serve: the HTTP API, MCP endpoint and playground on http://127.0.0.1:8000 over the demo index (make demo first)
serve: $(STAMP)
	$(VENV)/bin/convsearch serve

## eval: rerun the quality rows of eval/expected.yaml, OK / FAIL each
eval: $(STAMP)
	$(VENV)/bin/convsearch eval regress --expected eval/expected.yaml

## train: the learned gate and term selector, 5-fold by dialog on the licensed sets (~2-8 min) → .convsearch/learned/ (report), then the shipped src/convsearch/models/ (learned.json + MODEL_CARD.md) and the fold models the evaluation reads (research/learned/folds.json.gz); the training code is research/learned/ (not in the wheel); see research/README.md and docs/LEARNED.md
train: $(STAMP)
	$(PY) -m research.learned.train --ablation --out .convsearch/learned
	$(PY) -m research.learned.export --out src/convsearch/models --folds research/learned/folds.json.gz

clean:
	rm -rf .convsearch .pytest_cache
