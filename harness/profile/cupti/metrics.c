/* metrics.c - libstitchprof's hardware metrics: the CUPTI range profiler in auto-range, kernel-replay
 * mode measures every kernel launched between stitchprof_metrics_begin and _end (each launch is
 * replayed once per pass until every counter is read), and _end writes one line per launch with the
 * throughputs Nsight Compute's Speed of Light and Occupancy sections are built from (docs/trace.md,
 * "metrics file"). CUPTI names auto ranges by number only, so a launch callback records each
 * launch's kernel name in order, and whether it came inside a call the worker marked. */
#include "stitchprof.h"
#include "stitchprof_int.h"

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Launches one session keeps; a call that launches more has the rest dropped (and counted). */
#define MAX_RANGES 2048

/* Asked for in this order; a metric this chip or CUPTI does not know is left out and named in the
 * file (`skipped`), so one missing name never costs the others. */
static const char *const wanted[] = {
	"gpu__time_duration.sum",
	"sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed",
	"lts__throughput.avg.pct_of_peak_sustained_elapsed",
	"l1tex__throughput.avg.pct_of_peak_sustained_active",
	"sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
	"sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
};
#define NWANTED (sizeof(wanted) / sizeof(wanted[0]))

struct launch {
	char *mangled;
	int in_call;
};

static struct msession {
	pthread_mutex_t lock;
	int active;
	char *path;
	char chip[64];
	const char *metrics[NWANTED];
	size_t nmetrics;
	const char *skipped[NWANTED];
	CUptiResult skipped_why[NWANTED];
	size_t nskipped;
	size_t passes;
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *rp;
	uint8_t *avail, *config, *data;
	size_t data_size;
	CUpti_SubscriberHandle sub;
	struct launch *launches;
	size_t nlaunches, cap, unrecorded;
	int marked;                  /* a call the worker times is running (stitchprof_metrics_mark) */
} M = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* A runtime launch calls a driver launch underneath: the runtime's callback names it, and the nested
 * driver callback on the same thread is skipped. */
static __thread int tl_in_runtime_launch;

static int runtime_launch(CUpti_CallbackId id)
{
	return id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
	       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
	       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
	       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 ||
	       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 ||
	       id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000;
}

static int driver_launch(CUpti_CallbackId id)
{
	return id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunch || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchGrid ||
	       id == CUPTI_DRIVER_TRACE_CBID_cuLaunchGridAsync;
}

static void record_launch(const char *name)
{
	pthread_mutex_lock(&M.lock);
	if (!M.active || M.nlaunches >= MAX_RANGES) {
		M.unrecorded += M.active;
		pthread_mutex_unlock(&M.lock);
		return;
	}
	if (M.nlaunches == M.cap) {
		size_t cap = M.cap ? 2 * M.cap : 64;
		struct launch *l = realloc(M.launches, cap * sizeof(*l));
		if (!l) {
			M.unrecorded++;
			pthread_mutex_unlock(&M.lock);
			return;
		}
		M.launches = l;
		M.cap = cap;
	}
	M.launches[M.nlaunches].mangled = strdup(name && *name ? name : "?");
	M.launches[M.nlaunches++].in_call = M.marked;
	pthread_mutex_unlock(&M.lock);
}

static void CUPTIAPI launch_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *cb = data;
	(void)user;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && runtime_launch(id)) {
		if (cb->callbackSite == CUPTI_API_ENTER) {
			tl_in_runtime_launch = 1;
			record_launch(cb->symbolName);
		} else {
			tl_in_runtime_launch = 0;
		}
	} else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && driver_launch(id) && cb->callbackSite == CUPTI_API_ENTER &&
		   !tl_in_runtime_launch) {
		record_launch(cb->symbolName);
	}
}

typedef int (*ctx_get_fn)(CUcontext *);
typedef int (*dev_get_fn)(CUdevice *);

/* The calling thread's CUDA context and its device, from the driver torch already loaded (linking
 * libcuda would tie the library to a driver stub at build time). */
static int current_context(CUcontext *ctx, CUdevice *dev)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return sp_fail("metrics: the CUDA driver is not loaded in this process");
	ctx_get_fn get_ctx = (ctx_get_fn)dlsym(h, "cuCtxGetCurrent");
	dev_get_fn get_dev = (dev_get_fn)dlsym(h, "cuCtxGetDevice");
	int rc = !get_ctx || !get_dev || get_ctx(ctx) != 0 || !*ctx || get_dev(dev) != 0;
	dlclose(h);
	return rc ? sp_fail("metrics: no current CUDA context on this thread") : 0;
}

static void release(void)
{
	if (M.sub) {
		cuptiUnsubscribe(M.sub);
		M.sub = NULL;
	}
	if (M.rp) {
		CUpti_RangeProfiler_Disable_Params d = { .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
		d.pRangeProfilerObject = M.rp;
		cuptiRangeProfilerDisable(&d);
		M.rp = NULL;
	}
	if (M.host) {
		CUpti_Profiler_Host_Deinitialize_Params d = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };
		d.pHostObject = M.host;
		cuptiProfilerHostDeinitialize(&d);
		M.host = NULL;
	}
	free(M.avail);
	free(M.config);
	free(M.data);
	M.avail = M.config = M.data = NULL;
	for (size_t i = 0; i < M.nlaunches; i++)
		free(M.launches[i].mangled);
	free(M.launches);
	M.launches = NULL;
	M.nlaunches = M.cap = M.unrecorded = 0;
	free(M.path);
	M.path = NULL;
	M.active = M.marked = 0;
}

#define TRY(call, what)                                                                   \
	do {                                                                              \
		CUptiResult r_ = (call);                                                  \
		if (r_ != CUPTI_SUCCESS) {                                                \
			sp_fail("metrics: %s failed: %s", what, sp_cupti_msg(r_));        \
			release();                                                        \
			return -1;                                                        \
		}                                                                         \
	} while (0)

/* The host side: which counters the chip has, and a configuration image scheduling the metrics. */
static int configure(CUcontext ctx, CUdevice dev)
{
	CUpti_Device_GetChipName_Params chip = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	chip.deviceIndex = (size_t)dev;
	TRY(cuptiDeviceGetChipName(&chip), "reading the chip name");
	snprintf(M.chip, sizeof(M.chip), "%s", chip.pChipName ? chip.pChipName : "?");

	CUpti_Profiler_GetCounterAvailability_Params av = { .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	av.ctx = ctx;
	TRY(cuptiProfilerGetCounterAvailability(&av), "sizing the counter availability image");
	if (!(M.avail = malloc(av.counterAvailabilityImageSize ? av.counterAvailabilityImageSize : 1)))
		return sp_fail("metrics: out of memory"), release(), -1;
	av.pCounterAvailabilityImage = M.avail;
	TRY(cuptiProfilerGetCounterAvailability(&av), "reading the counter availability image");

	CUpti_Profiler_Host_Initialize_Params hi = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = M.chip;
	hi.pCounterAvailabilityImage = M.avail;
	TRY(cuptiProfilerHostInitialize(&hi), "initialising the profiler's host side");
	M.host = hi.pHostObject;

	for (size_t i = 0; i < NWANTED; i++) {
		CUpti_Profiler_Host_ConfigAddMetrics_Params add = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
		add.pHostObject = M.host;
		const char *one = wanted[i];
		add.ppMetricNames = &one;
		add.numMetrics = 1;
		CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add);
		if (r == CUPTI_SUCCESS) {
			M.metrics[M.nmetrics++] = wanted[i];
		} else {
			M.skipped_why[M.nskipped] = r;
			M.skipped[M.nskipped++] = wanted[i];
		}
	}
	if (!M.nmetrics)
		return sp_fail("metrics: this GPU (%s) offers none of the metrics", M.chip), release(), -1;

	CUpti_Profiler_Host_GetConfigImageSize_Params cs = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	cs.pHostObject = M.host;
	TRY(cuptiProfilerHostGetConfigImageSize(&cs), "sizing the configuration image");
	if (!(M.config = malloc(cs.configImageSize ? cs.configImageSize : 1)))
		return sp_fail("metrics: out of memory"), release(), -1;
	CUpti_Profiler_Host_GetConfigImage_Params ci = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	ci.pHostObject = M.host;
	ci.pConfigImage = M.config;
	ci.configImageSize = cs.configImageSize;
	TRY(cuptiProfilerHostGetConfigImage(&ci), "building the configuration image");
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	np.pConfigImage = M.config;
	np.configImageSize = cs.configImageSize;
	TRY(cuptiProfilerHostGetNumOfPasses(&np), "counting the replay passes");
	M.passes = np.numOfPasses;

	/* the target side: a range profiler on the context, one range per kernel launch, each replayed */
	CUpti_RangeProfiler_Enable_Params en = { .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	en.ctx = ctx;
	TRY(cuptiRangeProfilerEnable(&en), "enabling the range profiler");
	M.rp = en.pRangeProfilerObject;
	CUpti_RangeProfiler_GetCounterDataSize_Params ds = { .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	ds.pRangeProfilerObject = M.rp;
	ds.pMetricNames = M.metrics;
	ds.numMetrics = M.nmetrics;
	ds.maxNumOfRanges = MAX_RANGES;
	ds.maxNumRangeTreeNodes = MAX_RANGES;
	TRY(cuptiRangeProfilerGetCounterDataSize(&ds), "sizing the counter data image");
	M.data_size = ds.counterDataSize;
	if (!(M.data = calloc(1, M.data_size ? M.data_size : 1)))
		return sp_fail("metrics: out of memory"), release(), -1;
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params di = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	di.pRangeProfilerObject = M.rp;
	di.counterDataSize = M.data_size;
	di.pCounterData = M.data;
	TRY(cuptiRangeProfilerCounterDataImageInitialize(&di), "initialising the counter data image");
	CUpti_RangeProfiler_SetConfig_Params sc = { .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	sc.pRangeProfilerObject = M.rp;
	sc.configSize = cs.configImageSize;
	sc.pConfig = M.config;
	sc.counterDataImageSize = M.data_size;
	sc.pCounterDataImage = M.data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = MAX_RANGES;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	TRY(cuptiRangeProfilerSetConfig(&sc), "configuring the range profiler");
	return 0;
}

int stitchprof_metrics_begin(const char *path)
{
	CUcontext ctx;
	CUdevice dev;
	if (M.active)
		return sp_fail("metrics: a metrics session is already running");
	if (sp_tracing())
		return sp_fail("metrics: stop the trace first (the launch callbacks and the replays would disturb it)");
	if (current_context(&ctx, &dev))
		return -1;
	memset(M.metrics, 0, sizeof(M.metrics));
	M.nmetrics = M.nskipped = M.passes = 0;
	if (!(M.path = strdup(path)))
		return sp_fail("metrics: out of memory");
	CUpti_Profiler_Initialize_Params pi = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
	TRY(cuptiProfilerInitialize(&pi), "initialising the CUPTI profiler");
	if (configure(ctx, dev))
		return -1;
	TRY(cuptiSubscribe(&M.sub, launch_callback, NULL), "subscribing to launch callbacks");
	TRY(cuptiEnableDomain(1, M.sub, CUPTI_CB_DOMAIN_RUNTIME_API), "enabling runtime callbacks");
	TRY(cuptiEnableDomain(1, M.sub, CUPTI_CB_DOMAIN_DRIVER_API), "enabling driver callbacks");
	pthread_mutex_lock(&M.lock);
	M.active = 1;
	pthread_mutex_unlock(&M.lock);
	CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };
	st.pRangeProfilerObject = M.rp;
	TRY(cuptiRangeProfilerStart(&st), "starting the range profiler");
	return 0;
}

void stitchprof_metrics_mark(int in_call)
{
	pthread_mutex_lock(&M.lock);
	M.marked = in_call != 0;
	pthread_mutex_unlock(&M.lock);
}

/* Writes a name token: no whitespace or control characters inside a field. */
static void put_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s <= ' ' || *s == 0x7f ? '_' : *s, f);
}

int stitchprof_metrics_end(void)
{
	if (!M.active)
		return sp_fail("metrics: no metrics session is running");
	pthread_mutex_lock(&M.lock);
	M.active = 0; /* launches after this point are not ranges of ours */
	pthread_mutex_unlock(&M.lock);
	CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	sp.pRangeProfilerObject = M.rp;
	TRY(cuptiRangeProfilerStop(&sp), "stopping the range profiler");
	CUpti_RangeProfiler_DecodeData_Params dd = { .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	dd.pRangeProfilerObject = M.rp;
	TRY(cuptiRangeProfilerDecodeData(&dd), "decoding the counters");
	CUpti_RangeProfiler_GetCounterDataInfo_Params info = { .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	info.pCounterDataImage = M.data;
	info.counterDataImageSize = M.data_size;
	TRY(cuptiRangeProfilerGetCounterDataInfo(&info), "counting the ranges");

	FILE *f = fopen(M.path, "w");
	if (!f) {
		sp_fail("metrics: cannot write %s", M.path);
		release();
		return -1;
	}
	fprintf(f, "stitchmetrics 1\nchip %s\npasses %zu\n", M.chip, M.passes);
	for (size_t i = 0; i < M.nmetrics; i++)
		fprintf(f, "metric %zu %s\n", i, M.metrics[i]);
	for (size_t i = 0; i < M.nskipped; i++)
		fprintf(f, "skipped %s %s\n", M.skipped[i], sp_cupti_msg(M.skipped_why[i]));
	fprintf(f, "launches %zu %zu\n", M.nlaunches, M.unrecorded);
	double values[NWANTED];
	size_t written = 0;
	for (size_t r = 0; r < info.numTotalRanges; r++) {
		CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
		ev.pHostObject = M.host;
		ev.pCounterDataImage = M.data;
		ev.counterDataImageSize = M.data_size;
		ev.rangeIndex = r;
		ev.ppMetricNames = M.metrics;
		ev.numMetrics = M.nmetrics;
		ev.pMetricValues = values;
		int ok = cuptiProfilerHostEvaluateToGpuValues(&ev) == CUPTI_SUCCESS;
		/* a range is a launch; its index is its place in launch order */
		fprintf(f, "range %zu %d ", r, r < M.nlaunches ? M.launches[r].in_call : 0);
		put_name(f, r < M.nlaunches ? M.launches[r].mangled : "-");
		for (size_t i = 0; i < M.nmetrics; i++) {
			if (ok && isfinite(values[i]))
				fprintf(f, " %.6g", values[i]);
			else
				fputs(" nan", f);
		}
		fputc('\n', f);
		written++;
	}
	fprintf(f, "dropped %zu\nend %zu\n", dd.numOfRangeDropped, written);
	int rc = fclose(f) == 0 ? 0 : sp_fail("metrics: writing %s failed", M.path);
	release();
	return rc;
}
