/* rundir.c - run directories (results/RUN_ID/): a valid name, the folder, config.yaml written when the
 * run is created (so the configuration that made the numbers travels with them), and its store. */
#include "store_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fs.h"

int run_id_check(const char *id, struct sb_error *err)
{
	int ok = id && *id && *id != '.' && strlen(id) < sizeof(((struct store_run *)0)->run_id);
	for (const char *p = id; ok && *p; p++)
		ok = isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-';
	if (!ok)
		return sb_error_set(err, SB_EINPUT, "run id '%s': use letters, digits, '.', '_' and '-' (not first), at "
				    "most 127 characters; it names the run's folder", id ? id : "");
	return 0;
}

/* Written once, through a temporary file, so a crash never leaves half a config.yaml. */
static int write_config(const char *dir, const struct config *cfg, struct sb_error *err)
{
	char *path = xstrfmt("%s/config.yaml", dir), *tmp = xstrfmt("%s/.config.yaml.tmp", dir);
	struct strbuf yaml = STRBUF_INIT;
	struct stat st;
	int rc = 0;
	if (stat(path, &st) == 0)
		goto out;
	strbuf_addstr(&yaml, "# the resolved configuration this run was created with (stitchbench " SB_VERSION ")\n");
	config_dump(cfg, CONFIG_DUMP_ALL, &yaml);
	FILE *f = fopen(tmp, "w");
	if (!f || fputs(yaml.buf, f) < 0 || fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path)) {
		rc = sb_error_set(err, SB_EIO, "cannot write %s: %s", path, strerror(errno));
		if (f)
			unlink(tmp);
	}
out:
	strbuf_release(&yaml);
	free(path);
	free(tmp);
	return rc;
}

int rundir_open(struct store **out, const char *dir, const struct config *cfg, struct store_run *r,
		struct sb_error *err)
{
	int rc = fs_mkdirs(dir, 0755);
	*out = NULL;
	if (rc)
		return sb_error_set(err, SB_EIO, "cannot create the run folder %s: %s", dir, strerror(-rc));
	char *db = xstrfmt("%s/%s", dir, STORE_FILE);
	struct store *s = NULL;
	if ((rc = store_open(&s, db, STORE_WRITE, err)) == 0 && (rc = store_use_run(s, r, err)) == 0)
		rc = write_config(dir, cfg, err);
	free(db);
	if (rc) {
		store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}
