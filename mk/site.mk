# The publication: OG cards, then the MkDocs Material site from runs/.
# `make site` builds into build/public.tmp and renames it to public/ only
# when `mkdocs build --strict` succeeded, so a failed build leaves the last
# good site (or none), never a half-written one.

BUILD_STAGES += build-og site
TEST_DEPS += node_modules/.installed
.PHONY: build-og site preview

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

build-og: $(STAMP)
	$(PYTHON) -m builders.og --out build/og

site: $(STAMP) node_modules/.installed
	rm -rf build/public.tmp
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet -d build/public.tmp
	rm -rf public && mv build/public.tmp public
	@echo "site: $$(find public -name '*.html' | wc -l) pages in public/"

preview: $(STAMP)
	@test -d public || { echo "no public/: run make build first"; exit 1; }
	$(PYTHON) -m builders.site.serve --dir public --port $${PORT:-8000}

BENCH_EXTRA += bench-site
.PHONY: bench-site
bench-site: $(STAMP)
	@$(PYTHON) -m builders.site.bench
