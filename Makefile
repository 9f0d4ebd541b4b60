# Both sacred commands work on a fresh machine: they create .venv when it is
# missing and (re)install the project whenever pyproject.toml changes.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run floor test test-quick bench install clean system-deps dist wheelhouse

# Debian packages the tests use: systemd-analyze (unit checks), /bin/kill (the
# unit's ExecReload), shellcheck (install.sh, make-ca.sh), mosquitto (the floor
# tests start their own broker on loopback), chromium (the floor's web view,
# headless) and the PostgreSQL server (the group store's tests start a throwaway
# cluster; Debian keeps its binaries off PATH, hence the path glob), and the font the
# floor's PDFs are set in (a file, not a command: tested with test -e). Installed
# when missing and we may; otherwise those tests say what is missing.
SYSTEM_TOOLS := systemd-analyze:systemd kill:procps shellcheck:shellcheck mosquitto:mosquitto chromium:chromium \
  /usr/lib/postgresql/*/bin/initdb:postgresql /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:fonts-dejavu-core \
  prometheus:prometheus
system-deps:
	@missing=""; for pair in $(SYSTEM_TOOLS); do \
	  { command -v $${pair%%:*} || test -e $${pair%%:*}; } >/dev/null 2>&1 || missing="$$missing $${pair##*:}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else echo "missing system packages:$$missing (install them to run every test)"; fi; fi

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[pi,dev,tui,floor]'
	touch $@

run: $(STAMP)
	$(VENV)/bin/dealerbox run --demo $(RUN_ARGS)

# A live room on this machine: a broker, the collector, the web view and three
# simulated tables (docs/floor/install.md, "A live room in one command").
floor: $(STAMP) system-deps
	$(PY) -m dealerbox.floor.operating.demo_room $(FLOOR_ARGS)

# Every test, on every core: pytest-xdist, one session per worker (tests/conftest.py
# keeps the workers' ports, temporary directories and PostgreSQL clusters apart).
# worksteal: an idle worker takes half of a busy one's queue, which keeps both busy
# to the end whatever the tests' lengths.
PYTEST_PARALLEL := -n auto --dist worksteal
test: $(STAMP) system-deps
	$(PY) -m pytest $(PYTEST_PARALLEL) $(TEST_ARGS)

# The quick set, in a few minutes: every test but those tests/conftest.py marks slow.
test-quick: $(STAMP) system-deps
	$(PY) -m pytest $(PYTEST_PARALLEL) -m "not slow" $(TEST_ARGS)

bench: $(STAMP) system-deps
	$(PY) -m bench

# The sdist and the wheel built from it, in dist/ (python -m build).
DIST ?= dist
# setuptools copies into build/ and never removes from it: a module deleted from the
# tree would still ship. Every dist starts from an empty build/.
dist: $(STAMP)
	rm -rf $(DIST) build
	$(PY) -m build --no-isolation --outdir $(DIST) .

# Every wheel an offline install needs (systemd/install.sh --wheelhouse DIR):
# dealerbox and its dependencies with the extras EXTRAS. The compiled ones
# (RPi.GPIO, spidev, lgpio) are built for this machine: run it on a Pi with the
# same OS and Python as the tables (docs/INSTALL.md).
EXTRAS ?= pi
WHEELHOUSE ?= wheelhouse
wheelhouse: $(STAMP)
	$(PY) -m pip wheel --quiet --no-build-isolation --wheel-dir $(WHEELHOUSE) '.[$(EXTRAS)]'

# On a Raspberry Pi OS image, as root: user, groups, SPI/I2C, venv, unit (docs/INSTALL.md).
install:
	systemd/install.sh $(INSTALL_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis *.egg-info build dist wheelhouse
