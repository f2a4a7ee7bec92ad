// oprec.cpp - the CPU's record of which ATen operators the candidate's calls ran (docs/threat-model.md,
// class 5). The candidate's worker loads it before the candidate is imported, and it installs one global
// RecordFunction callback: the dispatcher calls it for every operator on every thread, whoever asked for
// the operator (Python, pybind11, the C API, a jit registry lookup, a thread of the candidate's own), so a
// spelling the static rules miss still shows here. Inside a window (one call of the candidate's model,
// opened and closed by the worker) each outermost operator is written with its duration to a pipe whose
// other end the parent holds. A line leaves the process when its operator ends: nothing the candidate runs
// later can take it back.
//
// Lines, each one write() shorter than PIPE_BUF (so lines of two threads never interleave):
//   O <ns> <name>            an outermost operator ended inside a window
//   W <ns> <check> <lost> <quiet> <quiet_ns>
//                            a window closed: its length; 1 when the check record the window runs at its end
//                            reached the callback (0: callbacks were removed or record functions switched off
//                            on this thread); lines lost to a full pipe since the last W; the quiet operators
//                            of the window and their time
// Quiet operators (the parent names them at install: allocation, views, copies, random draws, which a
// kernel of the candidate's own calls around its work and which never make a finding) are counted in the
// process and reported with their window, so an honest call pays for no write() per operator; every other
// operator is written as it ends. The write end is non-blocking: a candidate that floods the record loses
// lines and the W line says so.
#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <errno.h>
#include <string>
#include <string_view>
#include <unistd.h>
#include <unordered_set>

namespace {

int rec_fd = -1;
std::atomic<int> window_open{0};
std::atomic<long long> window_t0{0};
std::atomic<long long> lost{0};
std::atomic<long long> quiet_calls{0}, quiet_ns{0};
std::unordered_set<std::string> *quiet_names; // filled before the candidate is imported, read-only after
thread_local int depth = 0;
thread_local int check_seen = 0;
const char *const CHECK_NAME = "stitchbench::record_check";

long long now_ns()
{
	return std::chrono::duration_cast<std::chrono::nanoseconds>(
		std::chrono::steady_clock::now().time_since_epoch()).count();
}

void put(const char *line, int n)
{
	if (n <= 0)
		return;
	if (write(rec_fd, line, (size_t)n) != n)
		lost.fetch_add(1, std::memory_order_relaxed);
}

struct Entered : at::ObserverContext {
	long long t0;
	bool outermost;
};

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
	if (!window_open.load(std::memory_order_relaxed))
		return nullptr;
	if (!strcmp(fn.name(), CHECK_NAME)) {
		check_seen = 1;
		return nullptr;
	}
	auto e = std::make_unique<Entered>();
	e->outermost = depth++ == 0;
	e->t0 = e->outermost ? now_ns() : 0;
	return e;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *ctx)
{
	if (!ctx)
		return;
	auto *e = static_cast<Entered *>(ctx);
	if (depth > 0)
		depth--;
	if (!e->outermost)
		return;
	long long ns = now_ns() - e->t0;
	if (quiet_names && quiet_names->count(std::string(fn.name()))) {
		quiet_calls.fetch_add(1, std::memory_order_relaxed);
		quiet_ns.fetch_add(ns, std::memory_order_relaxed);
		return;
	}
	char line[320];
	int n = snprintf(line, sizeof(line), "O %lld %.250s\n", ns, fn.name());
	put(line, n < (int)sizeof(line) ? n : (int)sizeof(line) - 1);
}

} // namespace

// Names an operator as quiet ("aten::empty_like"); only before sb_oprec_install.
extern "C" void sb_oprec_quiet(const char *name)
{
	if (rec_fd >= 0 || !name)
		return;
	if (!quiet_names)
		quiet_names = new std::unordered_set<std::string>();
	quiet_names->insert(name);
}

extern "C" int sb_oprec_install(int fd)
{
	if (rec_fd >= 0 || fd < 0)
		return -1;
	rec_fd = fd;
	at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).scopes({ at::RecordScope::FUNCTION }));
	return 0;
}

extern "C" void sb_oprec_open(void)
{
	check_seen = 0;
	quiet_calls.store(0);
	quiet_ns.store(0);
	window_t0.store(now_ns());
	window_open.store(1);
}

extern "C" void sb_oprec_close(void)
{
	{
		// the check: a record function of our own, which reaches on_enter only while the callbacks are
		// installed and record functions are on for this thread, as they were when the window opened
		at::RecordFunction check(at::RecordScope::FUNCTION);
		if (check.isActive())
			check.before(CHECK_NAME);
	}
	long long ns = now_ns() - window_t0.load();
	window_open.store(0);
	char line[128];
	int n = snprintf(line, sizeof(line), "W %lld %d %lld %lld %lld\n", ns, check_seen, lost.exchange(0),
			 quiet_calls.load(), quiet_ns.load());
	put(line, n);
}
