/*
 * ds_foreign.c -- reading SQLite files kcast did not write (an nsys
 * export, the GPU Mangrove databases) with every read bounded.
 *
 * Why: such a file is input, and SQLite runs what the file defines.  An
 * nsys export whose CUPTI_ACTIVITY_KIND_KERNEL was an infinite recursive
 * view made `kcast dataset import-nsys` run forever (memory flat, no
 * message).  So:
 *  - the tables an importer reads must be tables (ds_foreign_table): a
 *    view can compute anything, so one is refused by name;
 *  - the connection is read-only, and a progress handler stops any
 *    statement once the connection has done more work than a file of its
 *    size can honestly need: DS_FOREIGN_BASE_STEPS plus
 *    DS_FOREIGN_STEPS_PER_BYTE virtual-machine steps per byte of the file.
 *    Reading a row costs a few hundred steps and a row takes tens of bytes,
 *    so an honest read of any size stays far below it, while a loop that
 *    does not end stops within a second or two on a small file.
 */
#include "datasets/ds.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

/* Budget: base steps and steps per byte of the file (see the top). */
#define DS_FOREIGN_BASE_STEPS 200000000ull
#define DS_FOREIGN_STEPS_PER_BYTE 400ull
/* The handler runs every this many steps. */
#define DS_FOREIGN_TICK 10000

static int on_progress(void *arg) {
  ds_foreign *f = arg;
  f->used += DS_FOREIGN_TICK;
  if (f->used <= f->budget) return 0;
  f->stopped = 1;
  return 1; /* SQLITE_INTERRUPT */
}

int ds_foreign_open(const char *path, ds_foreign *f, char *err, size_t cap) {
  memset(f, 0, sizeof *f);
  f->path = path;
  struct stat sb;
  if (stat(path, &sb) != 0) {
    snprintf(err, cap, "%s: %s", path, strerror(errno));
    return -1;
  }
  if (sqlite3_open_v2(path, &f->h, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
      SQLITE_OK) {
    snprintf(err, cap, "%s: cannot open: %s", path, f->h ? sqlite3_errmsg(f->h) : "out of memory");
    sqlite3_close(f->h);
    f->h = NULL;
    return -1;
  }
  sqlite3_busy_timeout(f->h, 5000);
  f->budget = DS_FOREIGN_BASE_STEPS + DS_FOREIGN_STEPS_PER_BYTE * (unsigned long long)sb.st_size;
  sqlite3_progress_handler(f->h, DS_FOREIGN_TICK, on_progress, f);
  return 0;
}

void ds_foreign_close(ds_foreign *f) {
  if (f && f->h) sqlite3_close(f->h);
  if (f) f->h = NULL;
}

int ds_foreign_table(ds_foreign *f, const char *name) {
  sqlite3_stmt *s = NULL;
  int kind = 0;
  if (sqlite3_prepare_v2(f->h, "SELECT type FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE",
                         -1, &s, NULL) != SQLITE_OK)
    return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(s, 0);
    kind = t && !strcmp(t, "table") ? 1 : t && !strcmp(t, "view") ? 2 : 3;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return -1;
  return kind == 1 ? DS_FOREIGN_TABLE : kind == 0 ? DS_FOREIGN_MISSING : DS_FOREIGN_NOT_TABLE;
}

const char *ds_foreign_errmsg(const ds_foreign *f, char *buf, size_t cap) {
  if (f->stopped)
    snprintf(buf, cap, "%s: reading stopped after %llu steps of work, more than a file of its "
             "size needs (a view or a query that does not end?)", f->path,
             (unsigned long long)f->used);
  else
    snprintf(buf, cap, "%s: %s", f->path, f->h ? sqlite3_errmsg(f->h) : "not open");
  return buf;
}
