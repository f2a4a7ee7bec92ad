# Makefile - builds bin/stitchbench and its tests; `make test` runs everything CI runs,
# `make demo` sets up the machine and runs the default job. See README.md.

CC      ?= gcc
CFLAGS  ?= -O2 -g
# snprintf into fixed buffers truncates on purpose (bounded messages), so that warning is off.
CFLAGS  += -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-format-truncation -MMD -MP
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)
GITREV  := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
CPPFLAGS += -DSB_VERSION='"$(VERSION)"' -DSB_GIT='"$(GITREV)"'
# main.o prints the revision (--version): it is rebuilt whenever the revision it was built at changes
$(shell mkdir -p build && [ "$$(cat build/gitrev 2>/dev/null)" = "$(GITREV)" ] || echo "$(GITREV)" >build/gitrev)

# libyaml, jansson and SQLite are linked statically so that a binary built on Debian also runs on
# GPU nodes that lack them (DESIGN §3); libcurl stays dynamic. Their paths are looked up when a link
# runs ('=', not ':='): on a fresh machine `make demo` installs them (setup) after make read this file.
static_lib = $(shell $(CC) -print-file-name=lib$(1).a)
STATIC_LIBS = $(call static_lib,yaml) $(call static_lib,jansson) $(call static_lib,sqlite3)
# libmicrohttpd (`stitchbench serve`) is static too; its TLS side needs GnuTLS, whose libgnutls.so.30 every
# Debian and Ubuntu system has (apt itself uses it).
STATIC_LIBS += $(call static_lib,microhttpd)
LDLIBS  = $(STATIC_LIBS) -lgnutls -lcurl -lm -ldl -lpthread

SRC      := $(shell find harness -name '*.c' -not -path 'harness/profile/cupti/*' | sort)
# The baseline agents (baselines/*.c) link into the same library as harness/agents/ (docs/agents.md).
SRC      += $(sort $(wildcard baselines/*.c))
LIB_SRC  := $(filter-out harness/main.c,$(SRC))
LIB_OBJ  := $(LIB_SRC:%.c=build/%.o)
MAIN_OBJ := build/harness/main.o

UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/tests/%)

.PHONY: all setup demo test test-fast test-gpu bench bench-eval bench-real bench-compare bench-hw clean

all: bin/stitchbench

bin/stitchbench: $(MAIN_OBJ) build/libstitchbench.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(MAIN_OBJ): build/gitrev

build/libstitchbench.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

build/tests/%: tests/unit/%.c tests/unit/testutil.h build/libstitchbench.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Iharness -o $@ $< build/libstitchbench.a $(LDLIBS) -lcmocka

setup:
	@bash scripts/setup.sh

# The build is a second make after setup: with -j, a prerequisite list would not wait for setup.
demo: setup
	@$(MAKE) --no-print-directory all
	bin/stitchbench doctor
	bin/stitchbench problems
	@# the demo's run ends with its report (output.report: Markdown and HTML with gnuplot plots)
	@bash scripts/demo.sh

# One summary line at the end: "N passed, N failed". tests/run.sh runs the unit, end-to-end and
# worker tests side by side and adds them up (tests/README.md).
test: all $(UNIT_BIN)
	@bash tests/run.sh

# the edit loop's tier: the unit tests and the end-to-end and pytest files that judge nothing
test-fast: all $(UNIT_BIN)
	@bash tests/run.sh --fast

test-gpu: all
	@bash scripts/gpu-check.sh

# Measurements for BENCHMARKS.md (a GPU node; SB_BENCH_CPU=1 to try it on the CPU).
bench: all
	@bash scripts/bench/bench.sh

# the evaluator's part of it: cold and warm builds, one candidate's turnaround by stage
bench-eval: all
	@SB_BENCH_PARTS=build,stages bash scripts/bench/bench.sh

# upstream KernelBench's references as candidates, then real LLM-written candidates (BENCHMARKS.md)
bench-real: all
	@bash scripts/bench/bench_real.sh

# two agents with identical files and one 1.5x slower: are they told apart only when the data says so?
bench-compare: all
	@bash scripts/bench/bench_compare.sh

# per-kernel bound classes beside Nsight Compute's own sections, on a GPU node with ncu (BENCHMARKS.md)
bench-hw: all
	@python3 scripts/bench/hw_crosscheck.py

clean:
	rm -rf build bin lib

# libstitchprof (harness/profile/cupti/, DESIGN §1): the CUPTI tracer the workers load. Built when the CUPTI
# headers exist; it links libcupti dynamically and finds it through an rpath that covers both layouts
# of a CUDA toolkit (lib64/ and extras/CUPTI/lib64/), here and on GPU nodes.
CUDA_HOME ?= /usr/local/cuda
CUPTI_H   := $(firstword $(wildcard $(CUDA_HOME)/include/cupti.h $(CUDA_HOME)/extras/CUPTI/include/cupti.h))
CUPTI_LIBDIR := $(firstword $(dir $(wildcard $(CUDA_HOME)/lib64/libcupti.so $(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so)))
prof_empty :=
PROF_RPATH := $(subst $(prof_empty) $(prof_empty),:,$(sort $(foreach d,$(CUDA_HOME) /usr/local/cuda,$(d)/lib64 $(d)/extras/CUPTI/lib64)))
.PHONY: prof
# libsbspawn (DESIGN §6): the child's side of the fork server's spawn, the same process setup and
# sandbox code as bin/stitchbench's, loaded by harness/worker/template.py (eval.fork_server).
SPAWN_SRC := harness/eval/proc/forkchild.c harness/core/proc.c harness/eval/proc/sandbox.c \
	     harness/eval/proc/sandbox_caps.c harness/core/strbuf.c
all: lib/libsbspawn.so
lib/libsbspawn.so: $(SPAWN_SRC:%.c=build/pic/%.o)
	@mkdir -p lib
	$(CC) $(CFLAGS) -shared -o $@ $^ -Wl,--no-undefined

build/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -c -o $@ $<

all: prof
ifneq ($(CUPTI_H),)
prof: lib/libstitchprof.so
PROF_SRC := harness/profile/cupti/stitchprof.c harness/profile/cupti/metrics.c
lib/libstitchprof.so: $(PROF_SRC) harness/profile/cupti/stitchprof.h harness/profile/cupti/stitchprof_int.h
	@mkdir -p lib
	$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -fPIC -shared -I$(dir $(CUPTI_H)) -Iharness/profile/cupti/cshim -o $@ $(PROF_SRC) \
		-L$(CUPTI_LIBDIR) -Wl,-rpath,$(PROF_RPATH) -Wl,--no-undefined -lcupti -ldl -lpthread -lm
else
prof:
	@echo "note: no CUPTI headers under $(CUDA_HOME) (set CUDA_HOME): lib/libstitchprof.so not built, profiling is off"
endif

-include $(shell find build -name '*.d' 2>/dev/null)
