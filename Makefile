# The README's two commands: `make demo` and `make test`.
GO ?= go
BIN := bin/rindactl

.PHONY: build demo test test-short vet fmt-check ci bench reliability clean

build:
	$(GO) build -o $(BIN) ./cmd/rindactl

# Replays the incident end to end on a throwaway Postgres.
demo: build
	scripts/demo.sh

# The whole test suite against one throwaway Postgres cluster (each test
# clones its own database from a migrated template).
test:
	scripts/pg run -- $(GO) test -count=1 ./...

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

ci: fmt-check vet test

clean:
	rm -rf bin
