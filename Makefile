# The two commands: `make run` (the app on its embedded defaults) and `make test`.
VENV := .venv
STAMP := $(VENV)/.setup-stamp

.PHONY: run test setup lint bench package clean

$(STAMP): pyproject.toml scripts/setup.sh scripts/system-packages.txt
	bash scripts/setup.sh

setup: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/companion

test: $(STAMP)
	$(VENV)/bin/python -m ruff check app tests bench
	$(VENV)/bin/python -m mypy app
	$(VENV)/bin/python -m pytest -q -ra

lint: $(STAMP)
	$(VENV)/bin/python -m ruff check app tests bench
	$(VENV)/bin/python -m mypy app

# every benchmark of bench/ (Pipecat side by side in its own .venv-pipecat): bench/out/
bench: $(STAMP)
	$(VENV)/bin/python -m pip install -q "matplotlib>=3.8"
	$(VENV)/bin/python bench/run_all.py

# the Linux desktop packages (PyInstaller bundle, self-test, .tar.gz, .deb): dist/
# (about 5 minutes on 2 cores; Windows and macOS: packaging/README.md)
PACKAGE_FLAGS ?= --self-test --tarball --deb
package: $(STAMP)
	$(VENV)/bin/python -m pip install -q "pyinstaller>=6"
	$(VENV)/bin/python packaging/build.py $(PACKAGE_FLAGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
