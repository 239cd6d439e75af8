# One entry point: `make run` (main job on the embedded weights) and `make test` (whole suite).
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SAMPLE ?= vision/assets/sample_page.png

.PHONY: setup system test run bench serve ui clean

setup: system $(STAMP)

# System packages: FFmpeg's libraries (torchcodec), DejaVu fonts (rendering), Chromium (UI browser test),
# Ghostscript, qpdf and Tesseract (OCRmyPDF and its plugin test), poppler-utils (pdftotext).
# Installed with apt when we are root; otherwise we say what to install.
system:
	@missing=""; \
	command -v ffmpeg >/dev/null 2>&1 || missing="$$missing ffmpeg"; \
	[ -d /usr/share/fonts/truetype/dejavu ] || missing="$$missing fonts-dejavu-core"; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v gs >/dev/null 2>&1 || missing="$$missing ghostscript"; \
	command -v qpdf >/dev/null 2>&1 || missing="$$missing qpdf"; \
	command -v tesseract >/dev/null 2>&1 || missing="$$missing tesseract-ocr"; \
	command -v pdftotext >/dev/null 2>&1 || missing="$$missing poppler-utils"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing with apt-get:$$missing"; \
	    apt-get update -qq >/dev/null && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  else \
	    echo "missing system packages:$$missing"; echo "run: sudo apt-get install$$missing"; exit 1; \
	  fi; \
	fi

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[all,test]'
	@touch $(STAMP)

test: setup
	$(PY) -m pytest -q tests

run: setup
	$(VENV)/bin/vision ocr $(SAMPLE) --format txt

bench: setup
	$(PY) benchmarks/run_all.py

serve: setup
	$(VENV)/bin/vision serve

ui: setup
	$(VENV)/bin/vision ui

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
