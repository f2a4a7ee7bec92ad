/* runtime.c - the runtime hack rules: each turns facts the workers reported, or comparisons the parent
 * made, into findings with a message that says what was seen and what to do instead (docs/checks.md). */
#include "runtime.h"

#include <math.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aten_utility.h"

/* ---------- facts ---------- */

static void parse_range(json_t *j, struct rt_range *r)
{
	r->ptr = (uint64_t)json_integer_value(json_array_get(j, 0));
	r->nbytes = (uint64_t)json_integer_value(json_array_get(j, 1));
}

static struct rt_range *parse_ranges(json_t *arr, size_t *n)
{
	size_t i;
	json_t *x;
	struct rt_range *v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	*n = 0;
	json_array_foreach(arr, i, x)
		if (json_is_array(x) && json_array_size(x) == 2)
			parse_range(x, &v[(*n)++]);
	return v;
}

static void copy_str(char *dst, size_t cap, json_t *j)
{
	const char *s = json_string_value(j);
	snprintf(dst, cap, "%s", s ? s : "");
}

void rt_call_parse(json_t *reply, struct rt_call *c)
{
	size_t i;
	json_t *o, *x;
	memset(c, 0, sizeof(*c));
	json_t *outs = json_object_get(reply, "outputs");
	c->out = xcalloc(json_array_size(outs) + 1, sizeof(*c->out));
	json_array_foreach(outs, i, o) {
		struct rt_output *r = &c->out[c->nout++];
		r->has_facts = json_is_boolean(json_object_get(o, "exact"));
		r->exact = json_is_true(json_object_get(o, "exact"));
		copy_str(r->type, sizeof(r->type), json_object_get(o, "type"));
		copy_str(r->layout, sizeof(r->layout), json_object_get(o, "layout"));
		copy_str(r->device, sizeof(r->device), json_object_get(o, "device"));
		r->meta = json_is_true(json_object_get(o, "meta"));
		r->contiguous = json_is_true(json_object_get(o, "contiguous"));
		x = json_object_get(o, "storage");
		if ((r->has_storage = json_is_array(x) && json_array_size(x) == 2))
			parse_range(x, &r->storage);
	}
	c->inputs = parse_ranges(json_object_get(reply, "inputs_storage"), &c->ninputs);
	c->params = parse_ranges(json_object_get(reply, "params_storage"), &c->nparams);
	json_t *th = json_object_get(reply, "threads");
	if ((c->has_threads = json_is_object(th))) {
		c->py_before = (int)json_integer_value(json_array_get(json_object_get(th, "python"), 0));
		c->py_after = (int)json_integer_value(json_array_get(json_object_get(th, "python"), 1));
		c->os_before = (int)json_integer_value(json_array_get(json_object_get(th, "os"), 0));
		c->os_after = (int)json_integer_value(json_array_get(json_object_get(th, "os"), 1));
		c->os_new = (int)json_integer_value(json_object_get(th, "new"));
	}
	json_array_foreach(json_object_get(reply, "patched"), i, x)
		if (json_is_string(x))
			strvec_push(&c->patched, json_string_value(x));
}

void rt_call_release(struct rt_call *c)
{
	free(c->out);
	free(c->inputs);
	free(c->params);
	strvec_clear(&c->patched);
	memset(c, 0, sizeof(*c));
}

static int overlaps(const struct rt_range *a, const struct rt_range *b)
{
	return a->nbytes && b->nbytes && a->ptr < b->ptr + b->nbytes && b->ptr < a->ptr + a->nbytes;
}

enum rt_alias rt_output_alias(const struct rt_call *c, size_t i, size_t *which)
{
	const struct rt_output *o = &c->out[i];
	if (!o->has_storage)
		return RT_ALIAS_NONE;
	for (size_t k = 0; k < c->ninputs; k++)
		if (overlaps(&o->storage, &c->inputs[k])) {
			if (which)
				*which = k;
			return RT_ALIAS_INPUT;
		}
	for (size_t k = 0; k < c->nparams; k++)
		if (overlaps(&o->storage, &c->params[k]))
			return RT_ALIAS_PARAM;
	return RT_ALIAS_NONE;
}

/* ---------- findings ---------- */

struct finding *rt_findings_add(struct findings *f, const char *id, const char *fmt, ...)
{
	if (findings_count(f, id) >= RT_MAX_PER_ID)
		return NULL;
	va_list ap;
	va_start(ap, fmt);
	struct finding *x = findings_vadd(f, id, fmt, ap);
	va_end(ap);
	return x;
}

/* ---------- the rules ---------- */

static const struct rt_output *ref_out(const struct rt_call *ref, size_t i)
{
	return ref && i < ref->nout && ref->out[i].has_facts ? &ref->out[i] : NULL;
}

/* "cuda:0" and "cuda" are the same place when the evaluation device has no index. */
static int same_device(const char *out, const char *want)
{
	size_t n = strlen(want);
	return !strcmp(out, want) || (!strchr(want, ':') && !strncmp(out, want, n) && out[n] == ':');
}

void rt_rule_plain_outputs(const struct rt_call *cand, const struct rt_call *ref, const char *device, const char *when,
			   struct findings *f)
{
	for (size_t i = 0; i < cand->nout; i++) {
		const struct rt_output *o = &cand->out[i], *r = ref_out(ref, i);
		if (!o->has_facts)
			continue;
		if (!o->exact && !(r && !r->exact))
			rt_findings_add(f, "H07", "out%zu of %s is a %s, not a plain torch.Tensor: a tensor subclass can compute "
					"its values outside the timed call, when they are read; return a plain tensor", i, when,
					o->type);
		else if (strcmp(o->layout, "torch.strided") && !(r && strcmp(r->layout, "torch.strided")))
			rt_findings_add(f, "H07", "out%zu of %s has layout %s: return a dense (strided) tensor as the reference "
					"does", i, when, o->layout);
		else if (o->meta && !(r && r->meta))
			rt_findings_add(f, "H07", "out%zu of %s is a meta tensor (no data): return a tensor that holds the "
					"result", i, when);
		else if (device && *o->device && !same_device(o->device, device) && !(r && !same_device(r->device, device)))
			rt_findings_add(f, "H07", "out%zu of %s is on %s, but the evaluation runs on %s: a copy made when the "
					"output is read is work outside the timed call; return it on %s", i, when, o->device,
					device, device);
	}
}

void rt_rule_alias(const struct rt_call *cand, const struct rt_call *ref, const char *when, struct findings *f)
{
	for (size_t i = 0; i < cand->nout; i++) {
		size_t which = 0;
		enum rt_alias a = rt_output_alias(cand, i, &which);
		enum rt_alias ra = ref && i < ref->nout ? rt_output_alias(ref, i, NULL) : RT_ALIAS_NONE;
		if (a == RT_ALIAS_NONE || a == ra)
			continue;
		if (a == RT_ALIAS_INPUT)
			rt_findings_add(f, "H17", "out%zu of %s shares memory with input %zu: the candidate returned its input "
					"(or a view of it), which passes only where the operation is the identity on this "
					"problem's inputs; compute the result into a new tensor", i, when, which);
		else
			rt_findings_add(f, "H11", "out%zu of %s shares memory with a parameter or buffer of ModelNew: it returns "
					"stored values rather than a result computed from the inputs", i, when);
	}
}

void rt_rule_threads(const struct rt_call *calls, size_t n, const char *const *names, struct findings *f)
{
	for (size_t k = 0; k < n; k++) {
		const struct rt_call *c = &calls[k];
		if (!c->has_threads)
			continue;
		if (c->py_after > c->py_before)
			rt_findings_add(f, "H06", "%d Python thread%s started during forward (%s) %s still running after it "
					"returned (%d before the call, %d after): work can finish after the timer stops; "
					"finish all work before returning", c->py_after - c->py_before,
					c->py_after - c->py_before == 1 ? "" : "s", names[k],
					c->py_after - c->py_before == 1 ? "was" : "were", c->py_before, c->py_after);
		else if (k > 0 && c->os_new > 0 && c->os_after > c->os_before)
			rt_findings_add(f, "H06", "%d new OS thread%s started during forward (%s) %s still alive after it "
					"returned (%d threads before the call, %d after): work can finish after the timer "
					"stops; join every thread before returning", c->os_new, c->os_new == 1 ? "" : "s",
					names[k], c->os_new == 1 ? "was" : "were", c->os_before, c->os_after);
	}
}

void rt_rule_threads_after_timing(int py_after, int py, struct findings *f)
{
	if (py > py_after)
		rt_findings_add(f, "H06", "%d more Python thread%s alive after the timing loop than after the correctness "
				"calls (%d, then %d): work started during timed calls can finish after the timer stops; "
				"finish all work before returning", py - py_after, py - py_after == 1 ? " was" : "s were",
				py_after, py);
}

void rt_rule_process(const char *caught, int others, int first_other, const char *when, struct findings *f)
{
	if (caught && !findings_has(f, "H06"))
		rt_findings_add(f, "H06", "the candidate's process catches %s %s (the kernel's view of it, not the "
				"worker's): a signal handler runs its code outside the timed call, so work can finish after "
				"the timer stops; compute everything inside forward, without handlers or timers", caught, when);
	if (others && !findings_has(f, "H06"))
		rt_findings_add(f, "H06", "%d other process%s of the candidate's (pid %d) %s alive %s: a helper process "
				"can do the work after the timer stops, or tamper with the worker; finish all work in forward",
				others, others == 1 ? "" : "es", first_other, others == 1 ? "is" : "are", when);
}

/* An idle worker blocks in a read: its threads sleep. 10% of one CPU, and at least 8 ms, leaves room for a
 * stray wake-up (a timer of the runtime, page reclaim) and is far below what a thread that works shows. */
#define IDLE_CPU_SHARE 0.1
#define IDLE_CPU_MIN_MS 8.0

void rt_rule_idle_work(double cpu_ms, double wall_ms, const char *busy, struct findings *f)
{
	if (!(wall_ms > 0) || cpu_ms <= IDLE_CPU_MIN_MS || cpu_ms <= IDLE_CPU_SHARE * wall_ms)
		return;
	rt_findings_add(f, "H06", "the candidate's process used %.0f ms of CPU in %.0f ms while no call of it was in "
			"flight (after its last timed call; the kernel's clock for the process%s%s): a thread that works "
			"between calls does work the timer never sees; do all the work inside forward and let threads "
			"wait (join them, or block them) between calls", cpu_ms, wall_ms, busy && *busy ? "; threads: " : "",
			busy && *busy ? busy : "");
}

void rt_rule_patched(const struct strvec *patched, const char *when, struct findings *f)
{
	if (!patched->nr)
		return;
	struct strbuf names = STRBUF_INIT;
	for (size_t i = 0; i < patched->nr && i < 8; i++)
		strbuf_addf(&names, "%s%s", i ? ", " : "", patched->v[i]);
	if (patched->nr > 8)
		strbuf_addf(&names, " and %zu more", patched->nr - 8);
	rt_findings_add(f, "H08", "%s %s replaced %s: replacing the functions a harness times, synchronises or compares "
			"with can fake its results; leave library functions alone", names.buf,
			patched->nr == 1 ? "was" : "were", when);
	strbuf_release(&names);
}

void rt_rule_same_output(const uint64_t *cand, const uint64_t *ref, const int *known, const uint32_t *seeds, size_t n,
			 struct findings *f)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			if (!known[i] || !known[j])
				continue;
			if (cand[i] == cand[j] && ref[i] != ref[j]) {
				rt_findings_add(f, "H11", "trials %zu and %zu (seeds %u and %u) returned bitwise identical outputs "
						"although the reference's differ: the output does not depend on the inputs "
						"(hard-coded or cached); compute it from the inputs", i, j, seeds[i], seeds[j]);
				return;
			}
		}
}

const char *rt_rule_determinism(int bitwise, int within_tolerance, uint32_t seed, const char *detail,
				struct findings *f)
{
	if (bitwise)
		return "bitwise";
	if (within_tolerance)
		return "within_tolerance";
	rt_findings_add(f, "H19", "a second run on the first trial's inputs (seed %u) gave other outputs: %s; "
			"uninitialised memory, a race or state kept between calls makes the result depend on luck", seed,
			detail && *detail ? detail : "they differ");
	return "differs";
}

const char *rt_rule_rotation(int second_passes, int same_as_first, int ref_same, const char *detail,
			     struct findings *f)
{
	if (second_passes && !(same_as_first && !ref_same))
		return "changed";
	if (same_as_first && !ref_same)
		rt_findings_add(f, "H11", "after new values were written into the same input tensors, forward returned the "
				"same output as before although the reference's changed: results cached by pointer or "
				"tensor identity are not results; compute from the values every call");
	else
		rt_findings_add(f, "H11", "after new values were written into the same input tensors, the output was "
				"wrong (%s), though the same values passed in fresh tensors: the candidate reuses results "
				"by pointer or tensor identity; compute from the values every call",
				detail && *detail ? detail : "it differs from the reference's");
	return "stale";
}

void rt_rule_zero_output(int cand_all_zero, int ref_all_zero, int passed, const char *name, const char *when,
			 struct findings *f)
{
	if (cand_all_zero && !ref_all_zero && passed)
		rt_findings_add(f, "H16", "%s of %s is all zeros and still passed: the reference's output is within the "
				"tolerance of zero, so the comparison cannot tell work from none (a flaw of the problem; "
				"see stitchbench audit)", name, when);
}

void rt_rule_poison(int nan_with_poison, int passes_without, uint32_t seed, struct findings *f)
{
	if (nan_with_poison && passes_without)
		rt_findings_add(f, "H09", "with freed device memory filled with NaN before the call, the output on seed %u "
				"held NaN; the same call without it did not: the kernel reads memory it never wrote, which "
				"held usable values by luck (zeros, or a result left by an earlier call); initialise or "
				"write every element", seed);
}

int rt_rule_trusted_clock(const struct rt_clock *tc, struct findings *f)
{
	if (!(tc->reported >= 1.0) || !isfinite(tc->speedup) || tc->reported <= RT_TRUSTED_SLACK * tc->speedup ||
	    tc->excess_us <= RT_TRUSTED_FLOOR * tc->ref_least_us || tc->excess_us <= RT_TRUSTED_NOISE * tc->excess_noise_us)
		return 0;
	return rt_findings_add(f, "H08", "the times the candidate's process reported give %.2fx, but the parent's own clock around "
			"its timed calls allows %.2fx (%.2fx at the end of its interval): its blocks spent %.0f us per call outside the calls "
			"they reported, the reference's %.0f us; the reported times are not what the calls took (times "
			"rewritten, or work done outside the timed calls)", tc->reported, tc->speedup, tc->hi,
			tc->cand_overhead_us, tc->ref_overhead_us) != NULL;
}

int rt_rule_block_sums(const struct rt_clock *tc, struct findings *f)
{
	if (tc->block_calls < 2 || !(tc->reported >= 1.0) || !(tc->block_speedup > 0) ||
	    tc->reported <= RT_BLOCK_SLACK * tc->block_speedup)
		return 0;
	return rt_findings_add(f, "H08", "its timed calls give %.2fx one by one (the paired median), but the sums of its blocks "
			"of %d calls only %.2fx: the work of a block is not in the calls that report it (one call doing "
			"the block's work for the others, seen before their calls ran); compute each call's outputs in "
			"that call", tc->reported, tc->block_calls, tc->block_speedup) != NULL;
}

void rt_rule_repeats(size_t n, double within, double ratio_repeat, double ratio_fresh, struct findings *f)
{
	if (n < RT_REPEAT_MIN || !(within > RT_REPEAT_FACTOR))
		return;
	rt_findings_add(f, "H11", "timed calls on inputs it had already seen ran %.1fx as fast relative to the reference "
			"as the new inputs of the same rounds (%.2fx against %.2fx over all rounds, %zu repeated calls): it "
			"keeps results by content and answers a repeat without computing it; compute every call", within,
			ratio_repeat, ratio_fresh, n);
}

/* ---------- the record of ATen operators (the CPU) ---------- */

size_t rt_operator_utilities(const char *const **names)
{
	size_t n = 0;
	while (sb_aten_utility[n])
		n++;
	*names = sb_aten_utility;
	return n;
}

/* Exact names, the overload cut at '.': the record gives an operator's name apart from its overload, so
 * "aten::slice_scatter" is never taken for "slice", and an in-place variant is quiet only where the list
 * names it ("uniform_"). */
int rt_operator_is_utility(const char *name)
{
	if (strncmp(name, "aten::", 6))
		return 1; /* not PyTorch's: an operator the candidate registered is its own code */
	name += 6;
	size_t n = strcspn(name, "."); /* an overload's name, where the recorder gives one */
	for (size_t i = 0; sb_aten_utility[i]; i++)
		if (strlen(sb_aten_utility[i]) == n && !strncmp(sb_aten_utility[i], name, n))
			return 1;
	return 0;
}

static struct rt_op *op_slot(struct rt_operators *o, const char *name)
{
	for (size_t i = 0; i < o->nops; i++)
		if (!strcmp(o->ops[i].name, name))
			return &o->ops[i];
	if (o->nops >= 4096)
		return NULL; /* the time still counts; the table for the message has enough names */
	o->ops = xrealloc(o->ops, (o->nops + 1) * sizeof(*o->ops));
	struct rt_op *op = &o->ops[o->nops++];
	memset(op, 0, sizeof(*op));
	snprintf(op->name, sizeof(op->name), "%s", name);
	return op;
}

static int cmp_op_ms(const void *a, const void *b)
{
	double x = ((const struct rt_op *)a)->ms, y = ((const struct rt_op *)b)->ms;
	return (x < y) - (x > y);
}

static void parse_op_line(struct rt_operators *o, const char *line)
{
	long long ns, lost, quiet, quiet_ns;
	int check, end = 0;
	char name[256];
	if (sscanf(line, "O %lld %255s%n", &ns, name, &end) == 2 && !line[end] && ns >= 0) {
		if (rt_operator_is_utility(name)) {
			o->other_ms += ns / 1e6;
			o->other_calls++;
			return;
		}
		o->compute_ms += ns / 1e6;
		o->compute_calls++;
		struct rt_op *op = op_slot(o, name);
		if (op) {
			op->ms += ns / 1e6;
			op->calls++;
		}
	} else if (sscanf(line, "W %lld %d %lld %lld %lld%n", &ns, &check, &lost, &quiet, &quiet_ns, &end) == 5 &&
		   !line[end] && ns >= 0 && (check == 0 || check == 1) && lost >= 0 && quiet >= 0 && quiet_ns >= 0) {
		o->windows++;
		o->other_calls += (size_t)quiet;
		o->other_ms += quiet_ns / 1e6;
		o->window_ms += ns / 1e6;
		o->unchecked += !check;
		o->lost += lost;
	} else {
		o->malformed++;
	}
}

void rt_operators_parse(struct rt_operators *o, const char *lines, size_t len)
{
	const char *p = lines, *end = lines + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n >= 320 || memchr(p, '\0', n)) {
			o->malformed++;
		} else if (n) {
			char line[320];
			memcpy(line, p, n);
			line[n] = '\0';
			parse_op_line(o, line);
		}
		p += n + 1;
	}
	/* the message's table: the largest compute operators */
	struct rt_op *sorted = xcalloc(o->nops + 1, sizeof(*sorted));
	memcpy(sorted, o->ops, o->nops * sizeof(*sorted));
	qsort(sorted, o->nops, sizeof(*sorted), cmp_op_ms);
	o->ntop = o->nops < RT_OPS_TOP ? o->nops : RT_OPS_TOP;
	memcpy(o->top, sorted, o->ntop * sizeof(*sorted));
	free(sorted);
}

void rt_operators_release(struct rt_operators *o)
{
	free(o->ops);
	o->ops = NULL;
	o->nops = 0;
}

void rt_rule_operators(const struct rt_operators *o, struct findings *f)
{
	if (!o->recorded)
		return;
	if (o->windows < o->expected) {
		findings_add(f, "H08", "the record of ATen operators holds %zu call%s of the candidate's model where "
			     "%zu were made: its lines were lost to a flood of operators, its descriptor was closed or "
			     "written over, or its calls were kept from opening their windows", o->windows,
			     o->windows == 1 ? "" : "s", o->expected);
		return;
	}
	if (o->unchecked) {
		findings_add(f, "H08", "record functions were off at the end of %zu of the candidate's calls (the "
			     "record's own check went unseen): code that removes ATen's callbacks or switches record "
			     "functions off hides which operators ran", o->unchecked);
		return;
	}
	if (o->lost) {
		findings_add(f, "H08", "the record of ATen operators overflowed: %lld lines lost during the candidate's "
			     "calls, which ran more operators than any kernel of its own needs", o->lost);
		return;
	}
	if (o->malformed) {
		findings_add(f, "H08", "the record of ATen operators holds %zu lines its recorder never writes: "
			     "something else wrote to its descriptor", o->malformed);
		return;
	}
	if (!(o->window_ms > 0) || !o->compute_calls)
		return;
	double share = o->compute_ms / o->window_ms;
	if (share < RT_OPS_FLAG)
		return;
	struct strbuf top = STRBUF_INIT;
	for (size_t i = 0; i < o->ntop; i++)
		strbuf_addf(&top, "%s%s (%.0f%%, %zu call%s)", i ? ", " : "", o->top[i].name,
			    100 * o->top[i].ms / o->window_ms, o->top[i].calls, o->top[i].calls == 1 ? "" : "s");
	struct strbuf ref = STRBUF_INIT;
	if (o->ref_call_ms > 0 && o->windows)
		strbuf_addf(&ref, "; per call %.0f%% of the reference's whole time",
			    100 * o->compute_ms / o->windows / o->ref_call_ms);
	struct finding *x = findings_add(f, "H01", "PyTorch's own operators ran for %.0f%% of the candidate's %zu "
					 "calls (%.1f of %.1f ms%s), whatever called them: %s", 100 * (share > 1 ? 1 : share),
					 o->windows, o->compute_ms, o->window_ms, ref.buf, top.buf);
	x->flag_only = share < RT_OPS_REJECT;
	strbuf_release(&ref);
	strbuf_release(&top);
}
