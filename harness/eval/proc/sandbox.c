/* sandbox.c - runs in the forked child just before exec: user/network/PID namespaces, rlimits,
 * Landlock (read everything but the hidden trees, write only the private ones), no capabilities. */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stddef.h>

/* ---------- environment ---------- */

/* Variables a worker may need from the parent. Everything else (API keys, tokens) is dropped. */
static const char *const env_allow[] = {
	"PATH", "LANG", "LC_ALL", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES",
	"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "PYTHONPATH", "VIRTUAL_ENV", "CC", "CXX",
	"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
	"TZ",
	/* libstitchprof's modes and diagnostics (docs/profile.md): how it records, not what the code sees */
	"STITCHPROF_ATTRIBUTION", "STITCHPROF_SKIP_KINDS", NULL,
};

void sandbox_env(struct strvec *env, const char *const *set)
{
	for (const char *const *k = env_allow; *k; k++) {
		const char *v = getenv(*k);
		int overridden = 0;
		for (const char *const *s = set; s && *s; s++)
			if (!strncmp(*s, *k, strlen(*k)) && (*s)[strlen(*k)] == '=')
				overridden = 1;
		if (v && !overridden)
			strvec_pushf(env, "%s=%s", *k, v);
	}
	for (const char *const *s = set; s && *s; s++)
		strvec_push(env, *s);
}

/* ---------- small helpers that are safe after fork ---------- */

static int fail(char *msg, size_t len, const char *what)
{
	snprintf(msg, len, "%s: %s", what, strerror(errno));
	return -1;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* ---------- namespaces ---------- */

/* Unprivileged: a user namespace first, mapping our uid to itself, so the other namespaces
 * can be created without root. */
static int enter_userns(char *msg, size_t len)
{
	char map[64];
	uid_t uid = geteuid();
	gid_t gid = getegid();
	if (unshare(CLONE_NEWUSER) != 0)
		return fail(msg, len, "unshare(CLONE_NEWUSER)");
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	if (write_file("/proc/self/uid_map", map))
		return fail(msg, len, "writing uid_map");
	write_file("/proc/self/setgroups", "deny\n");
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	if (write_file("/proc/self/gid_map", map))
		return fail(msg, len, "writing gid_map");
	return 0;
}

/* After unshare(CLONE_NEWPID) only our next child lives in the new namespace (as its PID 1).
 * We fork it and stay behind as a thin relay that exits as the child did, so the parent's
 * view (exit code or signal) is unchanged; when the child dies, everything it forked dies. */
static void become_pid1(void)
{
	pid_t pid = fork();
	if (pid < 0)
		_exit(126);
	if (pid == 0) {
		/* the namespace's init dies with the relay, and with it everything inside */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		return;
	}
	/* The relay never execs, so it still holds every descriptor stitchbench had at fork time,
	 * close-on-exec or not, among them the write end of the worker's command pipe: the worker
	 * would never see end-of-file when stitchbench dies. It needs none of them. */
	if (close_range(3, ~0U, 0) != 0)
		for (int fd = 3, max = (int)sysconf(_SC_OPEN_MAX); fd < max && fd < 65536; fd++)
			close(fd);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		kill(getpid(), WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
}

/* ---------- rlimits ---------- */

static int set_limit(int res, rlim_t v, const char *name, char *msg, size_t len)
{
	struct rlimit rl = { v, v };
	if (setrlimit(res, &rl) != 0)
		return fail(msg, len, name);
	return 0;
}

static int apply_rlimits(const struct sandbox_opts *o, char *msg, size_t len)
{
	if (set_limit(RLIMIT_CORE, 0, "RLIMIT_CORE", msg, len))
		return -1;
	if (o->cpu_seconds && set_limit(RLIMIT_CPU, (rlim_t)o->cpu_seconds, "RLIMIT_CPU", msg, len))
		return -1;
	if (o->file_bytes && set_limit(RLIMIT_FSIZE, (rlim_t)o->file_bytes, "RLIMIT_FSIZE", msg, len))
		return -1;
	if (o->address_space && set_limit(RLIMIT_AS, (rlim_t)o->address_space, "RLIMIT_AS", msg, len))
		return -1;
	if (o->open_files && set_limit(RLIMIT_NOFILE, (rlim_t)o->open_files, "RLIMIT_NOFILE", msg, len))
		return -1;
	if (o->processes && set_limit(RLIMIT_NPROC, (rlim_t)o->processes, "RLIMIT_NPROC", msg, len))
		return -1;
	return 0;
}

/* ---------- Landlock ---------- */

/* Debian 12's kernel headers stop at Landlock ABI 2; these values are the kernel's stable ABI
 * (include/uapi/linux/landlock.h), needed to use ABI 3 and 4 where the running kernel has them. */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#define SB_LANDLOCK_NET_BIND_TCP (1ULL << 0)
#define SB_LANDLOCK_NET_CONNECT_TCP (1ULL << 1)
struct sb_landlock_ruleset_attr {
	__u64 handled_access_fs;
	__u64 handled_access_net; /* ABI >= 4 */
};

#define LL_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_FILE_BITS (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_EXECUTE)
#define LL_WRITE_V1 (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | \
		     LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |   \
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK | \
		     LANDLOCK_ACCESS_FS_MAKE_SYM)

#define SB_MAX_HIDDEN 8 /* the hidden trees of one sandbox: the caches' (evalctx.c), a few */

struct ll {
	int fd;
	__u64 write_bits;
};

/* A rule holds for the tree beneath the inode it names. `follow` 0 names a symbolic link itself, which
 * grants nothing: Landlock judges an access by the real path it resolves to. */
static int ll_allow_at(struct ll *l, const char *path, __u64 access, int follow)
{
	int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -1;
	struct stat st;
	int have = fstat(fd, &st) == 0;
	if (have && S_ISLNK(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (have && !S_ISDIR(st.st_mode))
		access &= LL_FILE_BITS | LANDLOCK_ACCESS_FS_TRUNCATE; /* only file rights apply to a file */
	access &= LL_READ | l->write_bits;
	struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };
	int rc = access ? (int)syscall(SYS_landlock_add_rule, l->fd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) : 0;
	close(fd);
	return rc;
}

static int ll_allow(struct ll *l, const char *path, __u64 access)
{
	return ll_allow_at(l, path, access, 1);
}

/* Does `path` equal a hidden tree, or lie on the way to one? */
static int hidden_match(const char *path, const char *const *hidden, int *is_ancestor)
{
	size_t n = strlen(path);
	*is_ancestor = 0;
	for (const char *const *h = hidden; h && *h; h++) {
		if (!strcmp(*h, path))
			return 1;
		if (!strncmp(*h, path, n) && ((*h)[n] == '/' || n == 1))
			*is_ancestor = 1;
	}
	return 0;
}

/* Landlock only adds permissions, so "everything but H" is granted as: every entry of each
 * directory on the way to H, except the one leading to H, recursively. The walk follows no symbolic
 * link and H are real paths: a link to H, or to a folder above it, must not grant what H hides (a cache
 * whose ext/ or ref/ is a link to a shared folder, or a cache root reached through a link). */
static int ll_allow_all_but(struct ll *l, const char *dir, const char *const *hidden)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *de;
	char path[4096];
	int rc = 0;
	while (!rc && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", de->d_name);
		int anc;
		if (hidden_match(path, hidden, &anc))
			continue;
		rc = anc ? ll_allow_all_but(l, path, hidden) : ll_allow_at(l, path, LL_READ, 0);
	}
	closedir(d);
	return rc;
}

/* /dev is needed (GPU device nodes, /dev/null) but most of it must stay read-only. */
static int ll_allow_dev(struct ll *l)
{
	static const char *const rw[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
					  "/dev/shm", "/dev/nvidia-caps", NULL };
	int rc = 0;
	for (const char *const *p = rw; *p && !rc; p++)
		rc = ll_allow(l, *p, LL_READ | l->write_bits);
	DIR *d = opendir("/dev");
	if (!d)
		return rc;
	for (struct dirent *de; !rc && (de = readdir(d));) {
		if (strncmp(de->d_name, "nvidia", 6))
			continue;
		char path[300];
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		rc = ll_allow(l, path, LL_READ | l->write_bits);
	}
	closedir(d);
	return rc;
}

static int apply_landlock(const struct sandbox_opts *o, char *msg, size_t len)
{
	int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi <= 0)
		return 0; /* not available: doctor and the verdict say so */
	struct ll l = { -1, LL_WRITE_V1 };
	if (abi >= 2)
		l.write_bits |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		l.write_bits |= LANDLOCK_ACCESS_FS_TRUNCATE;
	struct sb_landlock_ruleset_attr attr = { .handled_access_fs = LL_READ | l.write_bits };
	if (abi >= 4 && o->no_network)
		attr.handled_access_net = SB_LANDLOCK_NET_BIND_TCP | SB_LANDLOCK_NET_CONNECT_TCP;
	/* Older ABIs reject the size of newer attribute structs. */
	size_t attr_size = abi >= 4 ? sizeof(attr) : sizeof(attr.handled_access_fs);
	l.fd = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
	if (l.fd < 0)
		return fail(msg, len, "landlock_create_ruleset");
	/* /proc/self: the CUDA driver writes to its own process entry during cuInit (without
	 * it, cudaGetDeviceCount fails with error 304). It is the worker's own entry only. */
	/* the hidden trees by their real paths, as the walk meets them; one that does not exist stays as given */
	const char *real_hidden[SB_MAX_HIDDEN + 1];
	char real_buf[SB_MAX_HIDDEN][PATH_MAX];
	size_t nh = 0;
	for (const char *const *h = o->hidden; h && *h; h++, nh++) {
		if (nh == SB_MAX_HIDDEN) {
			close(l.fd);
			return fail(msg, len, "too many hidden trees");
		}
		real_hidden[nh] = realpath(*h, real_buf[nh]) ? real_buf[nh] : *h;
	}
	real_hidden[nh] = NULL;
	if (ll_allow_all_but(&l, "/", real_hidden) || ll_allow_dev(&l) ||
	    ll_allow(&l, "/proc/self", LL_READ | l.write_bits) || ll_allow(&l, o->workdir, LL_READ | l.write_bits)) {
		close(l.fd);
		return fail(msg, len, "landlock_add_rule");
	}
	/* diagnosis aid: STITCHBENCH_LANDLOCK_RW=/a:/b grants read-write there too */
	const char *extra = getenv("STITCHBENCH_LANDLOCK_RW");
	if (extra) {
		char buf[1024], *save = NULL;
		snprintf(buf, sizeof(buf), "%s", extra);
		for (char *t = strtok_r(buf, ":", &save); t; t = strtok_r(NULL, ":", &save))
			ll_allow(&l, t, LL_READ | l.write_bits);
	}
	for (const char *const *w = o->write_dirs; w && *w; w++)
		if (ll_allow(&l, *w, LL_READ | l.write_bits)) {
			close(l.fd);
			return fail(msg, len, "landlock_add_rule (write dir)");
		}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, l.fd, 0) != 0) {
		close(l.fd);
		return fail(msg, len, "landlock_restrict_self");
	}
	close(l.fd);
	return 0;
}

/* Signals 32 and 33 are glibc's own (SIGCANCEL, SIGSETXID): its sigaction refuses them to programs and
 * installs its handlers there itself when a process starts threads. A raw rt_sigaction syscall could put
 * the candidate's code there, and /proc's SigCgt would show the same bit as glibc's handler. This filter
 * refuses every new action for them (EPERM) to the worker and all it starts, glibc's included, so the
 * bits say what is installed: a handler there came before the candidate's code ran (a fork server's
 * worker inherits glibc's), or not at all. Nothing in the worker needs them: no thread is cancelled and
 * no set*id call is made in a process that already runs threads. */
static int lock_libc_signals(char *msg, size_t len)
{
#if defined(__x86_64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif
#ifdef SB_AUDIT_ARCH
	struct sock_filter prog[] = {
		/* another ABI's system calls (i386's int 0x80, x32) would be another rt_sigaction: the worker
		 * makes none, so they are refused whole */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_AUDIT_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* the signal number: only its low word matters to the kernel */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 32, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 33, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* reading the action (act == NULL) stays allowed */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fprog = { (unsigned short)(sizeof(prog) / sizeof(prog[0])), prog };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) != 0)
		return fail(msg, len, "installing the seccomp filter for signals 32 and 33");
#else
	(void)msg;
	(void)len;
#endif
	return 0;
}

/* Root without capabilities cannot raise its rlimits back, load modules or remount. */
static void drop_capabilities(void)
{
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL)
			break;
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	memset(data, 0, sizeof(data));
	syscall(SYS_capset, &hdr, data);
}

int sandbox_enter(void *arg, char *msg, size_t msglen)
{
	const struct sandbox_opts *o = arg;
	int flags = 0;
	if (o->disabled & SANDBOX_NO_ALL)
		return 0;
	if (geteuid() != 0 && (o->no_network || o->own_pids) && enter_userns(msg, msglen) != 0)
		flags = -1; /* no user namespaces: run without the namespace layers */
	if (flags == 0) {
		if (o->no_network && !(o->disabled & SANDBOX_NO_NETNS) && unshare(CLONE_NEWNET) == 0)
			flags |= CLONE_NEWNET;
		/* with a mount namespace too: the new PID space needs its own /proc (below) */
		if (o->own_pids && !(o->disabled & SANDBOX_NO_PIDNS) && unshare(CLONE_NEWPID | CLONE_NEWNS) == 0)
			flags |= CLONE_NEWPID;
	}
	if (flags > 0 && (flags & CLONE_NEWPID)) {
		become_pid1();
		/* Libraries that look up /proc/<getpid()> (the CUDA driver does) must find themselves, not the
		 * host's PID 1: mount a /proc of this namespace, privately so the host's stays untouched. */
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
			return fail(msg, msglen, "mounting /proc for the PID namespace");
		/* /dev/shm (every worker may write there) and /tmp of its own, gone with it: nothing a candidate
		 * leaves there reaches a later one, and nothing an earlier one left is there */
		if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
			return fail(msg, msglen, "mounting a private /dev/shm");
		if (o->private_tmp && mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0)
			return fail(msg, msglen, "mounting a private /tmp");
	}
	if (!(o->disabled & SANDBOX_NO_RLIMITS) && apply_rlimits(o, msg, msglen))
		return -1;
	if (o->landlock && !(o->disabled & SANDBOX_NO_LANDLOCK) && apply_landlock(o, msg, msglen))
		return -1;
	if (!(o->disabled & SANDBOX_NO_CAPS))
		drop_capabilities();
	if (!(o->disabled & SANDBOX_NO_SIGLOCK) && lock_libc_signals(msg, msglen))
		return -1;
	return 0;
}

static const struct { const char *name; int bit; } layer_names[] = {
	{ "netns", SANDBOX_NO_NETNS }, { "pidns", SANDBOX_NO_PIDNS }, { "landlock", SANDBOX_NO_LANDLOCK },
	{ "rlimits", SANDBOX_NO_RLIMITS }, { "caps", SANDBOX_NO_CAPS }, { "siglock", SANDBOX_NO_SIGLOCK },
	{ "all", SANDBOX_NO_ALL }, { NULL, 0 },
};

int sandbox_disabled_from_env(void)
{
	const char *v = getenv("STITCHBENCH_SANDBOX_DISABLE");
	int bits = 0;
	for (int i = 0; v && layer_names[i].name; i++)
		if (strstr(v, layer_names[i].name))
			bits |= layer_names[i].bit;
	return bits;
}

void sandbox_describe(const struct sandbox_opts *o, struct sandbox_report *r)
{
	struct sandbox_caps c;
	memset(r, 0, sizeof(*r));
	sandbox_probe(&c);
	int off = o->disabled & SANDBOX_NO_ALL ? ~0 : o->disabled;
	r->netns = o->no_network && c.netns && !(off & SANDBOX_NO_NETNS);
	r->pidns = o->own_pids && c.netns && !(off & SANDBOX_NO_PIDNS); /* the same privilege decides both */
	r->landlock_abi = o->landlock && !(off & SANDBOX_NO_LANDLOCK) ? c.landlock_abi : 0;
	r->caps_dropped = !(off & SANDBOX_NO_CAPS);
	r->private_shm = r->pidns;
	r->private_tmp = r->pidns && o->private_tmp;
	r->memory_limit = off & SANDBOX_NO_RLIMITS ? 0 : o->address_space;
	size_t used = 0;
	for (int i = 0; off && layer_names[i].name; i++)
		if (off & layer_names[i].bit)
			used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used,
						 "%s disabled by STITCHBENCH_SANDBOX_DISABLE; ", layer_names[i].name);
	if (o->no_network && !c.netns)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used, "no network namespace (%s); ", c.netns_why);
	if (o->landlock && !c.landlock_abi)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used, "no Landlock (%s); ", c.landlock_why);
	if (!r->private_shm)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used,
					 "no private /dev/shm or /tmp (they come with the PID namespace); ");
	else if (!r->private_tmp)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used,
					 "/tmp is shared (the cache, the worker or the candidate lives there), read-only to it; ");
	if (!r->memory_limit)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used,
					 "no memory limit (on a GPU an address-space limit breaks CUDA); ");
	if (geteuid() == 0 && o->processes)
		used += (size_t)snprintf(r->notes + used, sizeof(r->notes) - used,
					 "RLIMIT_NPROC is not enforced for root (the PID namespace still reaps every fork); ");
	if (used >= 2)
		r->notes[used - 2] = '\0';
}
