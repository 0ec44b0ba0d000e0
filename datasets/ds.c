/*
 * ds.c -- the SQLite dataset store (see ds.h; docs/formats.md is normative).
 *
 * Design:
 *  - Feature names go through a dictionary table (feature_names); features
 *    rows are (launch_id, name_id, value) in a WITHOUT ROWID table keyed by
 *    (launch_id, name_id).  At ~1e5 launches x 200 features that keeps the
 *    file about a third of the size a text name per row would, and the
 *    primary key order is exactly the order the matrix query scans in.
 *  - The handle caches name -> id in a feat_vec (ids are small integers, a
 *    double holds them exactly), so a bulk insert does one B-tree insert per
 *    feature and no lookups.  Ids are only ever added; the cache is dropped
 *    whenever a transaction (or an insert's savepoint) rolls back, since ids
 *    handed out inside it are gone.
 *  - Every statement is prepared once per handle (SQLITE_PREPARE_PERSISTENT)
 *    and reset after use.
 *  - measurements is a rowid table with a UNIQUE key rather than WITHOUT
 *    ROWID: measured under callgrind, an insert cost ~11k instructions that
 *    way against ~44k as WITHOUT ROWID (features, whose rows are three
 *    numbers, are cheapest WITHOUT ROWID).
 *  - Crash safety is SQLite's rollback journal (journal_mode DELETE, the
 *    default; synchronous FULL): a writer killed before COMMIT leaves a hot
 *    journal that the next opener rolls back.  WAL is not used because
 *    datasets are shipped as single files and must open on read-only media.
 *  - A kcast dataset is recognised by PRAGMA application_id ("KCST") and the
 *    meta table's schema_version; anything else is refused by name.
 *  - Every open, read-only ones too, first rolls back a hot journal
 *    (recover_journal): SQLite rolls one back only on a connection that may
 *    write, so `dataset stats` on a file a killed `suite run` left said
 *    "attempt to write a readonly database".  Where the file or its folder
 *    cannot be written, the message says what to do.  A file of 0 bytes
 *    (what the rollback of a dataset's creation leaves) is a new dataset to
 *    every writer (DS_CREATE) and "empty, not a dataset yet" to every reader.
 */
#include "datasets/ds.h"
#include "datasets/ds_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <sqlite3.h>

#include "include/kcast.h"

/* Prepared statements of a handle.  ORDER STMT: stmt_sql[]. */
enum {
  ST_INS_LAUNCH, ST_DEL_FEATURES, ST_INS_FEATURE, ST_SEL_NAME, ST_INS_NAME,
  ST_FIND_LAUNCH, ST_INS_MEAS, ST_SAVEPOINT, ST_RELEASE, ST_ROLLBACK_TO,
  ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
  /* ST_INS_LAUNCH */
  "INSERT INTO launches(bench, app, dataset, lseq, kernel, grid_x, grid_y,"
  " grid_z, block_x, block_y, block_z, shmem, source, run_id)"
  " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
  " ON CONFLICT(app, dataset, lseq) DO UPDATE SET"
  " bench = coalesce(excluded.bench, bench), kernel = excluded.kernel,"
  " grid_x = excluded.grid_x, grid_y = excluded.grid_y,"
  " grid_z = excluded.grid_z, block_x = excluded.block_x,"
  " block_y = excluded.block_y, block_z = excluded.block_z,"
  " shmem = excluded.shmem, source = coalesce(excluded.source, source),"
  " run_id = coalesce(excluded.run_id, run_id)"
  " RETURNING id",
  /* ST_DEL_FEATURES */
  "DELETE FROM features WHERE launch_id = ?1",
  /* ST_INS_FEATURE */
  "INSERT INTO features(launch_id, name_id, value) VALUES(?1, ?2, ?3)",
  /* ST_SEL_NAME */
  "SELECT id FROM feature_names WHERE name = ?1",
  /* ST_INS_NAME */
  "INSERT INTO feature_names(name) VALUES(?1)",
  /* ST_FIND_LAUNCH */
  "SELECT id FROM launches WHERE app = ?1 AND dataset = ?2 AND lseq = ?3",
  /* ST_INS_MEAS */
  "INSERT INTO measurements(launch_id, gpu, metric, rep, value, tool, run_id)"
  " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
  " ON CONFLICT(gpu, metric, launch_id, rep) DO UPDATE SET"
  " value = excluded.value, tool = excluded.tool, run_id = excluded.run_id",
  /* ST_SAVEPOINT */ "SAVEPOINT ds_insert",
  /* ST_RELEASE */ "RELEASE ds_insert",
  /* ST_ROLLBACK_TO */ "ROLLBACK TO ds_insert",
};

/* Rows per multi-row features insert (3 parameters each, well under
   SQLite's 999/32766 parameter limits). */
#define FEAT_BATCH 32

struct ds_db {
  sqlite3 *h;                   /* open connection, never NULL */
  char *path;                   /* as given to ds_open, owned */
  sqlite3_stmt *st[ST_COUNT];   /* prepared lazily; NULL until first use */
  sqlite3_stmt *feat_batch;     /* FEAT_BATCH-row features insert, lazily */
  feat_vec names;               /* name -> feature_names.id cache */
  int64_t run_id;               /* current provenance row, 0 = none */
  int run_in_txn;               /* run_id was made inside the open txn */
  int bulk;                     /* foreign keys off for the open txn (ds_begin_bulk) */
  char *suite_str[5];           /* [2..4]: gpu, build, command of the last
                                   ds_suite_find, owned */
  char err[1024];               /* last failure, "" when none */
};

struct ds_iter {
  ds_db *db;
  sqlite3_stmt *st;             /* owned, finalized by ds_iter_free */
};

/* Runs that did not finish; created by new files and by ds_mark_partial in
   files made before it existed (old readers ignore it: docs/formats.md). */
#define PARTIAL_RUNS_SQL                                                       \
  "CREATE TABLE IF NOT EXISTS partial_runs(run_id INTEGER PRIMARY KEY"         \
  " REFERENCES runs(id) ON DELETE CASCADE, reason TEXT NOT NULL)"
/* Suite manifest entries that ran (kcast suite); created on first use, as
   partial_runs is in older files (docs/formats.md). */
#define SUITE_ENTRIES_SQL                                                      \
  "CREATE TABLE IF NOT EXISTS suite_entries(kind TEXT NOT NULL"                \
  " CHECK(kind IN ('run', 'profile')), app TEXT NOT NULL,"                     \
  " dataset TEXT NOT NULL, gpu TEXT NOT NULL DEFAULT '',"                      \
  " build TEXT NOT NULL, command TEXT NOT NULL,"                               \
  " seconds REAL NOT NULL CHECK(seconds >= 0),"                                \
  " launches INTEGER NOT NULL CHECK(launches >= 0),"                           \
  " run_id INTEGER REFERENCES runs(id),"                                       \
  " PRIMARY KEY(kind, app, dataset, gpu))"

static const char schema_sql[] =
  "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);\n"
  "CREATE TABLE runs(id INTEGER PRIMARY KEY, command TEXT, date TEXT NOT NULL,"
  " host TEXT, kcast_version TEXT);\n"
  PARTIAL_RUNS_SQL ";\n"
  "CREATE TABLE launches(id INTEGER PRIMARY KEY, bench TEXT,"
  " app TEXT NOT NULL CHECK(app <> ''), dataset TEXT NOT NULL,"
  " lseq INTEGER NOT NULL CHECK(lseq >= 0),"
  " kernel TEXT NOT NULL CHECK(kernel <> ''),"
  " grid_x INTEGER NOT NULL, grid_y INTEGER NOT NULL, grid_z INTEGER NOT NULL,"
  " block_x INTEGER NOT NULL, block_y INTEGER NOT NULL,"
  " block_z INTEGER NOT NULL, shmem INTEGER NOT NULL DEFAULT 0,"
  " source TEXT, run_id INTEGER REFERENCES runs(id),"
  " UNIQUE(app, dataset, lseq));\n"
  "CREATE TABLE feature_names(id INTEGER PRIMARY KEY,"
  " name TEXT NOT NULL UNIQUE CHECK(name <> ''));\n"
  "CREATE TABLE features(launch_id INTEGER NOT NULL"
  " REFERENCES launches(id) ON DELETE CASCADE,"
  " name_id INTEGER NOT NULL REFERENCES feature_names(id),"
  " value REAL NOT NULL, PRIMARY KEY(launch_id, name_id)) WITHOUT ROWID;\n"
  "CREATE VIEW feature_values(launch_id, name, value) AS"
  " SELECT f.launch_id, n.name, f.value FROM features f"
  " JOIN feature_names n ON n.id = f.name_id;\n"
  "CREATE TABLE measurements(id INTEGER PRIMARY KEY, launch_id INTEGER NOT NULL"
  " REFERENCES launches(id) ON DELETE CASCADE, gpu TEXT NOT NULL,"
  " metric TEXT NOT NULL CHECK(metric IN ('time_ns', 'power_w', 'energy_j')),"
  " rep INTEGER NOT NULL DEFAULT 0 CHECK(rep >= 0), value REAL NOT NULL,"
  " tool TEXT, run_id INTEGER REFERENCES runs(id),"
  " UNIQUE(gpu, metric, launch_id, rep));\n"
  "CREATE INDEX measurements_launch ON measurements(launch_id);\n"
  "CREATE TABLE gpus(name TEXT PRIMARY KEY, cc_major INTEGER, cc_minor INTEGER,"
  " sm_count INTEGER, sm_clock_mhz REAL, mem_clock_mhz REAL, mem_bytes INTEGER,"
  " mem_bandwidth_gbs REAL, l2_bytes INTEGER, tdp_w REAL, driver TEXT,"
  " cuda TEXT);\n";

/* ---------------------------------------------------------------- errors -- */

static void set_err(ds_db *db, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void set_err(ds_db *db, const char *fmt, ...) {
  int n = snprintf(db->err, sizeof db->err, "%s: ", db->path);
  if (n < 0 || (size_t)n >= sizeof db->err) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(db->err + n, sizeof db->err - (size_t)n, fmt, ap);
  va_end(ap);
}

/* "FILE: what: sqlite's message"; returns -1. */
static int sql_err(ds_db *db, const char *what) {
  set_err(db, "%s: %s", what, sqlite3_errmsg(db->h));
  return -1;
}

const char *ds_errmsg(const ds_db *db) { return db ? db->err : ""; }
const char *ds_path(const ds_db *db) { return db ? db->path : ""; }

void ds_set_errmsg(ds_db *db, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(db->err, sizeof db->err, fmt, ap);
  va_end(ap);
}

static void drop_name_cache(ds_db *db) {
  feat_free(&db->names);
  feat_init(&db->names);
}

/* Prepared statement `which`, reset and unbound; NULL with err set. */
static sqlite3_stmt *stmt(ds_db *db, int which) {
  if (!db->st[which]) {
    if (sqlite3_prepare_v3(db->h, stmt_sql[which], -1,
                           SQLITE_PREPARE_PERSISTENT, &db->st[which],
                           NULL) != SQLITE_OK) {
      sql_err(db, "cannot prepare statement");
      return NULL;
    }
  }
  return db->st[which];
}

static void done(sqlite3_stmt *s) {
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
}

static int exec(ds_db *db, const char *sql, const char *what) {
  if (sqlite3_exec(db->h, sql, NULL, NULL, NULL) != SQLITE_OK)
    return sql_err(db, what);
  return 0;
}

/* One int64 from a one-row query; -1 with err set. */
static int query_int(ds_db *db, const char *sql, int64_t *out) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h, sql, -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read dataset");
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) *out = sqlite3_column_int64(s, 0);
  else *out = 0;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    sql_err(db, "cannot read dataset");
    sqlite3_finalize(s);
    return -1;
  }
  sqlite3_finalize(s);
  return 0;
}

/* ------------------------------------------------------------ open/close -- */

static int create_schema(ds_db *db) {
  char sql[512];
  if (exec(db, "BEGIN IMMEDIATE", "cannot create dataset") < 0) return -1;
  int64_t ntables;
  if (query_int(db, "SELECT count(*) FROM sqlite_schema", &ntables) < 0)
    goto fail;
  if (ntables == 0) {
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = %d;"
             "INSERT INTO meta VALUES('application', 'kcast'),"
             " ('schema_version', '%d'), ('kcast_version', '%s'),"
             " ('created', strftime('%%Y-%%m-%%dT%%H:%%M:%%SZ', 'now'));",
             DS_APPLICATION_ID, DS_SCHEMA_VERSION, DS_SCHEMA_VERSION,
             KCAST_VERSION_STRING);
    if (exec(db, schema_sql, "cannot create dataset schema") < 0 ||
        exec(db, sql, "cannot create dataset schema") < 0)
      goto fail;
  }
  if (exec(db, "COMMIT", "cannot create dataset") < 0) goto fail;
  return 0;
fail:
  sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}

/* Is this a kcast dataset of a version we read?  Creates it when empty and
   allowed. */
static int check_schema(ds_db *db, int flags) {
  int64_t ntables, appid;
  if (query_int(db, "SELECT count(*) FROM sqlite_schema", &ntables) < 0) {
    set_err(db, "not a readable SQLite database (%s)", sqlite3_errmsg(db->h));
    return -1;
  }
  if (ntables == 0) {
    if (flags & DS_CREATE) return create_schema(db);
    set_err(db, "empty SQLite database, not a kcast dataset");
    return -1;
  }
  if (query_int(db, "PRAGMA application_id", &appid) < 0) return -1;
  int64_t hasmeta;
  if (query_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                    " AND name = 'meta'", &hasmeta) < 0)
    return -1;
  if (appid != DS_APPLICATION_ID || !hasmeta) {
    set_err(db, "SQLite database but not a kcast dataset (%s)",
            appid != DS_APPLICATION_ID ? "foreign application_id"
                                       : "no meta table");
    return -1;
  }
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT value FROM meta WHERE key = 'schema_version'",
                         -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read meta table");
  int rc = sqlite3_step(s);
  long ver = -1;
  if (rc == SQLITE_ROW) {
    const char *v = (const char *)sqlite3_column_text(s, 0);
    char *end = NULL;
    if (v) ver = strtol(v, &end, 10);
    if (!v || end == v || *end) ver = -1;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return sql_err(db, "cannot read meta table");
  if (ver < 0) {
    set_err(db, "kcast dataset without a valid schema_version in its meta table");
    return -1;
  }
  if (ver > DS_SCHEMA_VERSION) {
    set_err(db, "dataset schema version %ld is newer than this kcast reads (%d);"
            " use a newer kcast", ver, DS_SCHEMA_VERSION);
    return -1;
  }
  if (ver < DS_SCHEMA_VERSION) {
    set_err(db, "dataset schema version %ld is unknown (this kcast reads %d)",
            ver, DS_SCHEMA_VERSION);
    return -1;
  }
  return 0;
}

/* The folder of path (for access checks) into buf. */
static void folder_of(const char *path, char *buf, size_t cap) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(buf, cap, ".");
  else if (slash == path) snprintf(buf, cap, "/");
  else snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

/*
 * A journal beside path (PATH-journal, not empty) is what a writer killed
 * before COMMIT (or stopped by a full disk) leaves.  Where the file and its
 * folder can be written, a read on a read-write connection makes SQLite
 * roll it back (when it is hot: no live writer holds the lock) before
 * anything reads the file.  0, or -1 with the error in db.
 */
static int recover_journal(ds_db *db, const char *path) {
  size_t pl = strlen(path);
  char *jp = malloc(pl + 16);
  if (!jp) {
    set_err(db, "out of memory");
    return -1;
  }
  memcpy(jp, path, pl);
  memcpy(jp + pl, "-journal", 9);
  struct stat sb;
  int hot = stat(jp, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
  if (!hot) {
    free(jp);
    return 0;
  }
  char folder[4096];
  folder_of(path, folder, sizeof folder);
  if (access(path, W_OK) != 0 || access(folder, W_OK | X_OK) != 0) {
    /* a reader cannot roll it back, and must not read past it */
    set_err(db, "an interrupted write left its journal %s, which only a writer can roll back; "
            "open the dataset once where it and its folder %s are writable (any kcast command "
            "does it), or copy both files there; do not delete the journal (the dataset would "
            "be corrupt)", jp, folder);
    free(jp);
    return -1;
  }
  free(jp);
  sqlite3 *h = NULL;
  int rc = sqlite3_open_v2(path, &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc == SQLITE_OK) {
    sqlite3_busy_timeout(h, 5000);
    rc = sqlite3_exec(h, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
  }
  if (rc != SQLITE_OK && rc != SQLITE_NOTADB)
    set_err(db, "cannot roll back the journal of an interrupted write: %s",
            h ? sqlite3_errmsg(h) : "out of memory");
  sqlite3_close(h);
  return rc != SQLITE_OK && rc != SQLITE_NOTADB ? -1 : 0;
}

int ds_probe(const char *path, char *err, size_t cap) {
  if (err && cap) err[0] = 0;
  struct stat sb;
  if (!path || !*path) {
    if (err && cap) snprintf(err, cap, "(dataset): no file name given");
    return -1;
  }
  if (stat(path, &sb) != 0) {
    if (errno == ENOENT) return DS_PROBE_NONE;
    if (err && cap) snprintf(err, cap, "%s: %s", path, strerror(errno));
    return -1;
  }
  ds_db *db = NULL;
  if (!S_ISDIR(sb.st_mode)) {
    /* roll back first: what is left decides (0 bytes after a creation) */
    ds_db tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.path = (char *)path;
    if (recover_journal(&tmp, path) < 0) {
      if (err && cap) snprintf(err, cap, "%s", tmp.err);
      return -1;
    }
    if (stat(path, &sb) == 0 && sb.st_size == 0) return DS_PROBE_EMPTY;
  }
  if (ds_open(path, DS_READONLY, &db, err, cap) < 0) return -1;
  ds_close(db);
  return DS_PROBE_DATASET;
}

static void copy_err(char *err, size_t cap, const char *msg) {
  if (err && cap) snprintf(err, cap, "%s", msg);
}

int ds_open(const char *path, int flags, ds_db **out, char *err, size_t cap) {
  *out = NULL;
  if (err && cap) err[0] = 0;
  if (!path || !*path) {
    copy_err(err, cap, "(dataset): no file name given");
    return -1;
  }
  ds_db *db = calloc(1, sizeof *db);
  if (!db || !(db->path = strdup(path))) {
    free(db);
    if (err && cap) snprintf(err, cap, "%s: out of memory", path);
    return -1;
  }
  feat_init(&db->names);
  if ((flags & DS_CREATE) && (flags & DS_READONLY)) {
    set_err(db, "DS_CREATE and DS_READONLY exclude each other");
    goto fail;
  }
  struct stat sb;
  if (stat(path, &sb) != 0) {
    if (errno != ENOENT || !(flags & DS_CREATE)) {
      set_err(db, "%s", strerror(errno));
      goto fail;
    }
  } else if (S_ISDIR(sb.st_mode)) {
    set_err(db, "is a directory, not a dataset file");
    goto fail;
  } else if (recover_journal(db, path) < 0) {
    goto fail;
  } else if (stat(path, &sb) == 0 && sb.st_size == 0) {
    if (!(flags & DS_CREATE)) {
      set_err(db, "an empty file (0 bytes), not a kcast dataset yet (what an interrupted command "
              "leaves; every command that writes a dataset takes it as a new one)");
      goto fail;
    }
  } else if (sb.st_size > 0) {
    /* Check the header ourselves: SQLite would only say "file is not a
       database" at the first query. */
    static const char magic[16] = "SQLite format 3";
    char head[16];
    FILE *f = fopen(path, "rb");
    if (!f) {
      set_err(db, "%s", strerror(errno));
      goto fail;
    }
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got != sizeof head || memcmp(head, magic, sizeof magic) != 0) {
      set_err(db, "not an SQLite database (a kcast dataset is an SQLite 3 file)");
      goto fail;
    }
  }
  int oflags = (flags & DS_READONLY) ? SQLITE_OPEN_READONLY
                                     : SQLITE_OPEN_READWRITE;
  if (flags & DS_CREATE) oflags |= SQLITE_OPEN_CREATE;
  /* One thread per handle (ds.h): SQLite's per-call mutex is pure cost. */
  oflags |= SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path, &db->h, oflags, NULL) != SQLITE_OK) {
    if (db->h) sql_err(db, "cannot open");
    else set_err(db, "cannot open: out of memory");
    goto fail;
  }
  sqlite3_busy_timeout(db->h, 5000);
  if (exec(db, "PRAGMA foreign_keys = ON", "cannot configure") < 0) goto fail;
  if (check_schema(db, flags) < 0) goto fail;
  *out = db;
  return 0;
fail:
  copy_err(err, cap, db->err);
  ds_close(db);
  return -1;
}

void ds_set_busy_timeout(ds_db *db, int ms) {
  if (db && db->h) sqlite3_busy_timeout(db->h, ms);
}

void ds_close(ds_db *db) {
  if (!db) return;
  for (int i = 0; i < ST_COUNT; i++) sqlite3_finalize(db->st[i]);
  sqlite3_finalize(db->feat_batch);
  if (db->h) {
    if (!sqlite3_get_autocommit(db->h))
      sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db->h);
  }
  feat_free(&db->names);
  for (int i = 0; i < 5; i++) free(db->suite_str[i]);
  free(db->path);
  free(db);
}

/* ---------------------------------------------------------- transactions -- */

/* Foreign keys back on after a bulk transaction; 0 or -1. */
static int bulk_end(ds_db *db) {
  if (!db->bulk || !sqlite3_get_autocommit(db->h)) return 0;
  db->bulk = 0;
  return exec(db, "PRAGMA foreign_keys = ON", "cannot configure");
}

int ds_begin(ds_db *db) {
  db->err[0] = 0;
  if (!sqlite3_get_autocommit(db->h)) {
    set_err(db, "a transaction is already open");
    return -1;
  }
  return exec(db, "BEGIN IMMEDIATE", "cannot begin a write transaction");
}

int ds_begin_bulk(ds_db *db) {
  db->err[0] = 0;
  if (!sqlite3_get_autocommit(db->h)) {
    set_err(db, "a transaction is already open");
    return -1;
  }
  /* a no-op inside a transaction: set before BEGIN, restored after it ends */
  if (exec(db, "PRAGMA foreign_keys = OFF", "cannot configure") < 0) return -1;
  db->bulk = 1;
  if (exec(db, "BEGIN IMMEDIATE", "cannot begin a write transaction") < 0) {
    char keep[sizeof db->err];
    snprintf(keep, sizeof keep, "%s", db->err);
    bulk_end(db);
    snprintf(db->err, sizeof db->err, "%s", keep);
    return -1;
  }
  return 0;
}

int ds_commit(ds_db *db) {
  db->err[0] = 0;
  if (sqlite3_get_autocommit(db->h)) {
    set_err(db, "commit without a transaction");
    return -1;
  }
  if (exec(db, "COMMIT", "cannot commit") < 0) {
    /* Some errors (disk full, I/O) roll the transaction back by themselves. */
    if (sqlite3_get_autocommit(db->h)) {
      drop_name_cache(db);
      if (db->run_in_txn) db->run_id = 0;
      db->run_in_txn = 0;
      char keep[sizeof db->err];
      snprintf(keep, sizeof keep, "%s", db->err);
      bulk_end(db);
      snprintf(db->err, sizeof db->err, "%s", keep);
    }
    return -1;
  }
  db->run_in_txn = 0;
  return bulk_end(db);
}

int ds_rollback(ds_db *db) {
  db->err[0] = 0;
  drop_name_cache(db);
  if (db->run_in_txn) db->run_id = 0;
  db->run_in_txn = 0;
  if (sqlite3_get_autocommit(db->h)) return bulk_end(db);
  int rc = exec(db, "ROLLBACK", "cannot roll back");
  return bulk_end(db) < 0 ? -1 : rc;
}

int ds_integrity_check(ds_db *db) {
  db->err[0] = 0;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h, "PRAGMA integrity_check", -1, &s, NULL) !=
      SQLITE_OK)
    return sql_err(db, "cannot check integrity");
  int rc = sqlite3_step(s), ret = 0;
  if (rc == SQLITE_ROW) {
    const char *r = (const char *)sqlite3_column_text(s, 0);
    if (!r || strcmp(r, "ok") != 0) {
      set_err(db, "integrity check failed: %s", r ? r : "(no result)");
      ret = -1;
    }
  } else {
    sql_err(db, "cannot check integrity");
    ret = -1;
  }
  sqlite3_finalize(s);
  return ret;
}

/* ---------------------------------------------------------------- writers -- */

int ds_record_run(ds_db *db, const char *command, int64_t *run_id) {
  db->err[0] = 0;
  struct utsname u;
  char host[4 * sizeof u.nodename + 8] = "";
  if (uname(&u) == 0)
    snprintf(host, sizeof host, "%s %s %s %s", u.nodename, u.sysname,
             u.release, u.machine);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "INSERT INTO runs(command, date, host, kcast_version)"
                         " VALUES(?1, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),"
                         " ?2, ?3)", -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot record run");
  sqlite3_bind_text(s, 1, command, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 2, host, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 3, KCAST_VERSION_STRING, -1, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot record run");
  db->run_id = sqlite3_last_insert_rowid(db->h);
  db->run_in_txn = !sqlite3_get_autocommit(db->h);
  if (run_id) *run_id = db->run_id;
  return 0;
}

int ds_mark_partial(ds_db *db, int64_t run_id, const char *reason) {
  db->err[0] = 0;
  if (exec(db, PARTIAL_RUNS_SQL, "cannot mark the run partial") < 0) return -1;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO partial_runs(run_id, reason)"
                         " VALUES(?1, ?2)", -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot mark the run partial");
  sqlite3_bind_int64(s, 1, run_id);
  sqlite3_bind_text(s, 2, reason ? reason : "", -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  return rc == SQLITE_DONE ? 0 : sql_err(db, "cannot mark the run partial");
}

static void bind_run(ds_db *db, sqlite3_stmt *s, int col) {
  if (db->run_id > 0) sqlite3_bind_int64(s, col, db->run_id);
  else sqlite3_bind_null(s, col);
}

/* feature_names.id of name, inserting it; -1 with err set. */
static int name_id(ds_db *db, const char *name, int64_t *id) {
  long k = feat_find(&db->names, name);
  if (k >= 0) {
    *id = (int64_t)db->names.vals[k];
    return 0;
  }
  sqlite3_stmt *s = stmt(db, ST_SEL_NAME);
  if (!s) return -1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    *id = sqlite3_column_int64(s, 0);
    done(s);
  } else {
    done(s);
    if (rc != SQLITE_DONE) return sql_err(db, "cannot look up feature name");
    sqlite3_stmt *ins = stmt(db, ST_INS_NAME);
    if (!ins) return -1;
    sqlite3_bind_text(ins, 1, name, -1, SQLITE_STATIC);
    rc = sqlite3_step(ins);
    done(ins);
    if (rc != SQLITE_DONE) return sql_err(db, "cannot add feature name");
    *id = sqlite3_last_insert_rowid(db->h);
  }
  if (feat_set(&db->names, name, (double)*id) < 0) {
    set_err(db, "out of memory");
    return -1;
  }
  return 0;
}

/* Multi-row feature insert of FEAT_BATCH rows, prepared on first use. */
static sqlite3_stmt *feature_batch_stmt(ds_db *db) {
  if (!db->feat_batch) {
    char sql[64 + FEAT_BATCH * 16];
    size_t n = (size_t)snprintf(sql, sizeof sql,
                                "INSERT INTO features(launch_id, name_id, value)"
                                " VALUES");
    for (int j = 0; j < FEAT_BATCH && n < sizeof sql; j++)
      n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(?,?,?)", j ? "," : "");
    if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT,
                           &db->feat_batch, NULL) != SQLITE_OK) {
      sql_err(db, "cannot prepare statement");
      return NULL;
    }
  }
  return db->feat_batch;
}

static int check_launch(ds_db *db, const ds_launch *l, const feat_vec *fv) {
  if (!l || !l->app || !*l->app) {
    set_err(db, "launch without an app name");
    return -1;
  }
  if (!l->dataset) {
    set_err(db, "launch of app '%s' without a dataset label", l->app);
    return -1;
  }
  if (!l->kernel || !*l->kernel || l->lseq < 0 || l->shmem < 0) {
    set_err(db, "launch %s/%s/%lld: %s", l->app, l->dataset,
            (long long)l->lseq,
            (!l->kernel || !*l->kernel) ? "no kernel name"
            : l->lseq < 0               ? "negative launch sequence number"
                                        : "negative shared memory size");
    return -1;
  }
  for (size_t i = 0; fv && i < fv->n; i++) {
    if (!fv->names[i][0] || !isfinite(fv->vals[i])) {
      set_err(db, "launch %s/%s/%lld: feature '%s' %s", l->app, l->dataset,
              (long long)l->lseq, fv->names[i],
              fv->names[i][0] ? "is not a finite number" : "has an empty name");
      return -1;
    }
  }
  return 0;
}

static int insert_launch_body(ds_db *db, const ds_launch *l,
                              const feat_vec *fv, int64_t *out_id) {
  sqlite3_stmt *s = stmt(db, ST_INS_LAUNCH);
  if (!s) return -1;
  if (l->bench) sqlite3_bind_text(s, 1, l->bench, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, l->app, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, l->dataset, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 4, l->lseq);
  sqlite3_bind_text(s, 5, l->kernel, -1, SQLITE_STATIC);
  for (int d = 0; d < 3; d++) {
    sqlite3_bind_int64(s, 6 + d, l->grid[d]);
    sqlite3_bind_int64(s, 9 + d, l->block[d]);
  }
  sqlite3_bind_int64(s, 12, l->shmem);
  if (l->source) sqlite3_bind_text(s, 13, l->source, -1, SQLITE_STATIC);
  bind_run(db, s, 14);
  int rc = sqlite3_step(s);
  int64_t id = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
  if (rc == SQLITE_ROW) rc = sqlite3_step(s);
  done(s);
  if (rc != SQLITE_DONE || id <= 0) return sql_err(db, "cannot insert launch");
  if (fv) {
    s = stmt(db, ST_DEL_FEATURES);
    if (!s) return -1;
    sqlite3_bind_int64(s, 1, id);
    rc = sqlite3_step(s);
    done(s);
    if (rc != SQLITE_DONE) return sql_err(db, "cannot replace features");
    /* Whole batches through the multi-row statement, the rest one by one:
       the per-statement overhead dominates single-row inserts. */
    size_t i = 0;
    while (i < fv->n) {
      int batch = fv->n - i >= FEAT_BATCH;
      s = batch ? feature_batch_stmt(db) : stmt(db, ST_INS_FEATURE);
      if (!s) return -1;
      size_t k = batch ? FEAT_BATCH : 1;
      for (size_t j = 0; j < k; j++, i++) {
        int64_t nid;
        if (name_id(db, fv->names[i], &nid) < 0) {
          done(s);
          return -1;
        }
        sqlite3_bind_int64(s, (int)(3 * j + 1), id);
        sqlite3_bind_int64(s, (int)(3 * j + 2), nid);
        sqlite3_bind_double(s, (int)(3 * j + 3), fv->vals[i]);
      }
      rc = sqlite3_step(s);
      done(s);
      if (rc != SQLITE_DONE) return sql_err(db, "cannot insert feature");
    }
  }
  if (out_id) *out_id = id;
  return 0;
}

int ds_insert_launch(ds_db *db, const ds_launch *l, const feat_vec *features,
                     int64_t *id) {
  db->err[0] = 0;
  if (check_launch(db, l, features) < 0) return -1;
  sqlite3_stmt *sp = stmt(db, ST_SAVEPOINT);
  if (!sp) return -1;
  int rc = sqlite3_step(sp);
  done(sp);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot insert launch");
  if (insert_launch_body(db, l, features, id) == 0) {
    sqlite3_stmt *rel = stmt(db, ST_RELEASE);
    if (rel) {
      rc = sqlite3_step(rel);
      done(rel);
      if (rc == SQLITE_DONE) return 0;
      sql_err(db, "cannot insert launch");
    }
  }
  /* Undo this launch only; the caller's transaction stays open. */
  drop_name_cache(db);
  sqlite3_stmt *rb = stmt(db, ST_ROLLBACK_TO), *rel = stmt(db, ST_RELEASE);
  if (rb) { sqlite3_step(rb); done(rb); }
  if (rel) { sqlite3_step(rel); done(rel); }
  return -1;
}

int ds_find_launch(ds_db *db, const char *app, const char *dataset,
                   int64_t lseq, int64_t *id) {
  db->err[0] = 0;
  sqlite3_stmt *s = stmt(db, ST_FIND_LAUNCH);
  if (!s) return -1;
  sqlite3_bind_text(s, 1, app ? app : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, dataset ? dataset : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 3, lseq);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    if (id) *id = sqlite3_column_int64(s, 0);
    done(s);
    return 1;
  }
  done(s);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot look up launch");
  return 0;
}

static int valid_metric(const char *m) {
  return m && (!strcmp(m, "time_ns") || !strcmp(m, "power_w") ||
               !strcmp(m, "energy_j"));
}

int ds_insert_measurement(ds_db *db, int64_t launch_id, const char *gpu,
                          const char *metric, double value, int rep,
                          const char *tool) {
  db->err[0] = 0;
  if (!gpu || !*gpu) {
    set_err(db, "measurement of launch %lld without a GPU name",
            (long long)launch_id);
    return -1;
  }
  if (!valid_metric(metric)) {
    set_err(db, "launch %lld on %s: unknown metric '%s' (time_ns, power_w,"
            " energy_j)", (long long)launch_id, gpu, metric ? metric : "");
    return -1;
  }
  if (!isfinite(value) || value < 0 || rep < 0) {
    set_err(db, "launch %lld on %s: %s %s", (long long)launch_id, gpu, metric,
            rep < 0 ? "has a negative repetition number"
                    : "is not a finite number >= 0");
    return -1;
  }
  sqlite3_stmt *s = stmt(db, ST_INS_MEAS);
  if (!s) return -1;
  sqlite3_bind_int64(s, 1, launch_id);
  sqlite3_bind_text(s, 2, gpu, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, metric, -1, SQLITE_STATIC);
  sqlite3_bind_int(s, 4, rep);
  sqlite3_bind_double(s, 5, value);
  if (tool) sqlite3_bind_text(s, 6, tool, -1, SQLITE_STATIC);
  bind_run(db, s, 7);
  int rc = sqlite3_step(s);
  done(s);
  if (rc != SQLITE_DONE) {
    if (sqlite3_extended_errcode(db->h) == SQLITE_CONSTRAINT_FOREIGNKEY) {
      set_err(db, "measurement on %s: no launch with id %lld", gpu,
              (long long)launch_id);
      return -1;
    }
    return sql_err(db, "cannot insert measurement");
  }
  return 0;
}

static void bind_pos_int(sqlite3_stmt *s, int col, int64_t v) {
  if (v > 0) sqlite3_bind_int64(s, col, v);
  else sqlite3_bind_null(s, col);
}

static void bind_pos_double(sqlite3_stmt *s, int col, double v) {
  if (v > 0 && isfinite(v)) sqlite3_bind_double(s, col, v);
  else sqlite3_bind_null(s, col);
}

static void bind_str(sqlite3_stmt *s, int col, const char *v) {
  if (v && *v) sqlite3_bind_text(s, col, v, -1, SQLITE_STATIC);
  else sqlite3_bind_null(s, col);
}

int ds_upsert_gpu(ds_db *db, const ds_gpu *g) {
  db->err[0] = 0;
  if (!g || !g->name[0] || !memchr(g->name, 0, sizeof g->name)) {
    set_err(db, "GPU descriptor without a name");
    return -1;
  }
  sqlite3_stmt *s;
  /* Known values replace, unknown ones (NULL) keep what the row had: a
     time-only profile, which skips NVML, must not erase the power limit
     and driver a power profile recorded. */
  if (sqlite3_prepare_v2(db->h,
                         "INSERT INTO gpus VALUES(?1, ?2, ?3, ?4,"
                         " ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) ON CONFLICT(name) DO UPDATE SET"
                         " cc_major = coalesce(excluded.cc_major, cc_major),"
                         " cc_minor = coalesce(excluded.cc_minor, cc_minor),"
                         " sm_count = coalesce(excluded.sm_count, sm_count),"
                         " sm_clock_mhz = coalesce(excluded.sm_clock_mhz, sm_clock_mhz),"
                         " mem_clock_mhz = coalesce(excluded.mem_clock_mhz, mem_clock_mhz),"
                         " mem_bytes = coalesce(excluded.mem_bytes, mem_bytes),"
                         " mem_bandwidth_gbs = coalesce(excluded.mem_bandwidth_gbs, mem_bandwidth_gbs),"
                         " l2_bytes = coalesce(excluded.l2_bytes, l2_bytes),"
                         " tdp_w = coalesce(excluded.tdp_w, tdp_w),"
                         " driver = coalesce(excluded.driver, driver),"
                         " cuda = coalesce(excluded.cuda, cuda)",
                         -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot store GPU");
  sqlite3_bind_text(s, 1, g->name, -1, SQLITE_STATIC);
  bind_pos_int(s, 2, g->cc_major > 0 || g->cc_minor > 0 ? g->cc_major : 0);
  if (g->cc_major > 0) sqlite3_bind_int(s, 3, g->cc_minor);
  bind_pos_int(s, 4, g->sm_count);
  bind_pos_double(s, 5, g->sm_clock_mhz);
  bind_pos_double(s, 6, g->mem_clock_mhz);
  bind_pos_int(s, 7, g->mem_bytes);
  bind_pos_double(s, 8, g->mem_bandwidth_gbs);
  bind_pos_int(s, 9, g->l2_bytes);
  bind_pos_double(s, 10, g->tdp_w);
  bind_str(s, 11, memchr(g->driver, 0, sizeof g->driver) ? g->driver : NULL);
  bind_str(s, 12, memchr(g->cuda, 0, sizeof g->cuda) ? g->cuda : NULL);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot store GPU");
  return 0;
}

static void copy_col(char *dst, size_t cap, sqlite3_stmt *s, int col) {
  const unsigned char *t = sqlite3_column_text(s, col);
  snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

int ds_get_gpu(ds_db *db, const char *name, ds_gpu *out) {
  db->err[0] = 0;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT name, cc_major, cc_minor, sm_count,"
                         " sm_clock_mhz, mem_clock_mhz, mem_bytes,"
                         " mem_bandwidth_gbs, l2_bytes, tdp_w, driver, cuda"
                         " FROM gpus WHERE name = ?1",
                         -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read GPU");
  sqlite3_bind_text(s, 1, name ? name : "", -1, SQLITE_STATIC);
  int rc = sqlite3_step(s);
  if (rc == SQLITE_ROW) {
    memset(out, 0, sizeof *out);
    copy_col(out->name, sizeof out->name, s, 0);
    out->cc_major = sqlite3_column_int(s, 1);
    out->cc_minor = sqlite3_column_int(s, 2);
    out->sm_count = sqlite3_column_int(s, 3);
    out->sm_clock_mhz = sqlite3_column_double(s, 4);
    out->mem_clock_mhz = sqlite3_column_double(s, 5);
    out->mem_bytes = sqlite3_column_int64(s, 6);
    out->mem_bandwidth_gbs = sqlite3_column_double(s, 7);
    out->l2_bytes = sqlite3_column_int64(s, 8);
    out->tdp_w = sqlite3_column_double(s, 9);
    copy_col(out->driver, sizeof out->driver, s, 10);
    copy_col(out->cuda, sizeof out->cuda, s, 11);
  }
  sqlite3_finalize(s);
  if (rc == SQLITE_ROW) return 1;
  if (rc != SQLITE_DONE) return sql_err(db, "cannot read GPU");
  return 0;
}

/* ------------------------------------------------------------------ merge -- */

/* Does launch X of the attached input (SRC_KCAST) or of the dataset
   (DST_KCAST) have features other than its tuning parameters (tune.*,
   ds_is_tune_feature)?  Only those count as features when merging. */
#define SRC_KCAST(x)                                                           \
  "EXISTS (SELECT 1 FROM ds_src.features kf JOIN ds_src.feature_names kn"      \
  " ON kn.id = kf.name_id WHERE kf.launch_id = " x                             \
  " AND substr(kn.name, 1, 5) <> 'tune.')"
#define DST_KCAST(x)                                                           \
  "EXISTS (SELECT 1 FROM main.features kf JOIN main.feature_names kn"          \
  " ON kn.id = kf.name_id WHERE kf.launch_id = " x                             \
  " AND substr(kn.name, 1, 5) <> 'tune.')"

static const char *const merge_sql[] = {
  "INSERT OR REPLACE INTO main.gpus SELECT * FROM ds_src.gpus",
  "CREATE TEMP TABLE ds_runmap(src INTEGER PRIMARY KEY, dst INTEGER)",
  "CREATE TEMP TABLE ds_lmap(src INTEGER PRIMARY KEY, dst INTEGER NOT NULL)",
  /* runs are appended one by one in C (ids must be mapped) */
  "INSERT INTO main.launches(bench, app, dataset, lseq, kernel, grid_x, grid_y,"
  " grid_z, block_x, block_y, block_z, shmem, source, run_id)"
  " SELECT s.bench, s.app, s.dataset, s.lseq, s.kernel, s.grid_x, s.grid_y,"
  " s.grid_z, s.block_x, s.block_y, s.block_z, s.shmem, s.source,"
  " (SELECT dst FROM temp.ds_runmap WHERE src = s.run_id)"
  " FROM ds_src.launches s WHERE 1 ORDER BY s.id"
  " ON CONFLICT(app, dataset, lseq) DO UPDATE SET"
  " bench = coalesce(excluded.bench, bench), kernel = excluded.kernel,"
  " grid_x = excluded.grid_x, grid_y = excluded.grid_y,"
  " grid_z = excluded.grid_z, block_x = excluded.block_x,"
  " block_y = excluded.block_y, block_z = excluded.block_z,"
  " shmem = excluded.shmem, source = coalesce(excluded.source, source),"
  " run_id = coalesce(excluded.run_id, run_id)",
  "INSERT INTO temp.ds_lmap SELECT s.id, d.id FROM ds_src.launches s"
  " JOIN main.launches d ON d.app = s.app AND d.dataset = s.dataset"
  " AND d.lseq = s.lseq",
  "INSERT INTO main.feature_names(name) SELECT name FROM ds_src.feature_names"
  " WHERE 1 ORDER BY id ON CONFLICT(name) DO NOTHING",
  "DELETE FROM main.features WHERE launch_id IN (SELECT m.dst FROM"
  " temp.ds_lmap m WHERE EXISTS (SELECT 1 FROM ds_src.features f"
  " WHERE f.launch_id = m.src) AND (" SRC_KCAST("m.src") " OR NOT " DST_KCAST("m.dst") "))",
  "INSERT INTO main.features(launch_id, name_id, value)"
  " SELECT m.dst, dn.id, f.value FROM ds_src.features f"
  " JOIN temp.ds_lmap m ON m.src = f.launch_id"
  " JOIN ds_src.feature_names sn ON sn.id = f.name_id"
  " JOIN main.feature_names dn ON dn.name = sn.name"
  " WHERE " SRC_KCAST("m.src") " OR NOT " DST_KCAST("m.dst"),
  "INSERT INTO main.measurements(launch_id, gpu, metric, rep, value, tool,"
  " run_id) SELECT m.dst, s.gpu, s.metric, s.rep, s.value, s.tool,"
  " (SELECT dst FROM temp.ds_runmap WHERE src = s.run_id)"
  " FROM ds_src.measurements s JOIN temp.ds_lmap m ON m.src = s.launch_id"
  " WHERE 1 ON CONFLICT(gpu, metric, launch_id, rep) DO UPDATE SET"
  " value = excluded.value, tool = excluded.tool, run_id = excluded.run_id",
  "DROP TABLE temp.ds_lmap",
  "DROP TABLE temp.ds_runmap",
};

static int merge_runs(ds_db *db) {
  sqlite3_stmt *sel = NULL, *ins = NULL, *map = NULL;
  int ret = -1;
  sqlite3_stmt *same = NULL;
  if (sqlite3_prepare_v2(db->h, "SELECT id, command, date, host, kcast_version"
                         " FROM ds_src.runs ORDER BY id", -1, &sel, NULL) ||
      sqlite3_prepare_v2(db->h, "SELECT id FROM main.runs WHERE command IS ?1"
                         " AND date IS ?2 AND host IS ?3 AND kcast_version IS ?4"
                         " ORDER BY id LIMIT 1", -1, &same, NULL) ||
      sqlite3_prepare_v2(db->h, "INSERT INTO main.runs(command, date, host,"
                         " kcast_version) VALUES(?1, ?2, ?3, ?4)", -1, &ins,
                         NULL) ||
      sqlite3_prepare_v2(db->h, "INSERT INTO temp.ds_runmap VALUES(?1, ?2)",
                         -1, &map, NULL)) {
    sql_err(db, "cannot merge runs");
    goto out;
  }
  int rc;
  while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
    /* The same run merged before (or reached through another file) maps
       to its row: merging is idempotent. */
    for (int c = 1; c <= 4; c++) sqlite3_bind_value(same, c, sqlite3_column_value(sel, c));
    int64_t dst = 0;
    int src = sqlite3_step(same);
    if (src == SQLITE_ROW) dst = sqlite3_column_int64(same, 0);
    sqlite3_reset(same);
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
      sql_err(db, "cannot merge runs");
      goto out;
    }
    if (!dst) {
      for (int c = 1; c <= 4; c++)
        sqlite3_bind_value(ins, c, sqlite3_column_value(sel, c));
      if (sqlite3_step(ins) != SQLITE_DONE) {
        sql_err(db, "cannot merge runs");
        goto out;
      }
      sqlite3_reset(ins);
      dst = sqlite3_last_insert_rowid(db->h);
    }
    sqlite3_bind_int64(map, 1, sqlite3_column_int64(sel, 0));
    sqlite3_bind_int64(map, 2, dst);
    if (sqlite3_step(map) != SQLITE_DONE) {
      sql_err(db, "cannot merge runs");
      goto out;
    }
    sqlite3_reset(map);
  }
  if (rc != SQLITE_DONE) {
    sql_err(db, "cannot merge runs");
    goto out;
  }
  ret = 0;
out:
  sqlite3_finalize(sel);
  sqlite3_finalize(same);
  sqlite3_finalize(ins);
  sqlite3_finalize(map);
  return ret;
}

/* Partial marks of the merged runs (the input may predate partial_runs). */
static int merge_partial(ds_db *db) {
  int64_t has;
  if (query_int(db, "SELECT count(*) FROM ds_src.sqlite_schema WHERE type = 'table'"
                    " AND name = 'partial_runs'", &has) < 0)
    return -1;
  if (!has) return 0;
  return exec(db, PARTIAL_RUNS_SQL, "cannot merge partial runs") < 0 ||
                 exec(db, "INSERT OR REPLACE INTO main.partial_runs(run_id, reason)"
                          " SELECT m.dst, p.reason FROM ds_src.partial_runs p"
                          " JOIN temp.ds_runmap m ON m.src = p.run_id", "cannot merge partial runs") < 0
             ? -1 : 0;
}

/* Does the attached input have table name? */
static int src_has(ds_db *db, const char *name, int64_t *has) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT count(*) FROM ds_src.sqlite_schema WHERE type = 'table'"
           " AND name = '%s'", name);
  return query_int(db, sql, has);
}

/* Suite entries of the merged runs, by key (the input's win). */
static int merge_suite(ds_db *db) {
  int64_t has;
  if (src_has(db, "suite_entries", &has) < 0) return -1;
  if (!has) return 0;
  return exec(db, SUITE_ENTRIES_SQL, "cannot merge suite entries") < 0 ||
                 exec(db, "INSERT OR REPLACE INTO main.suite_entries(kind, app, dataset, gpu,"
                          " build, command, seconds, launches, run_id) SELECT s.kind, s.app,"
                          " s.dataset, s.gpu, s.build, s.command, s.seconds, s.launches,"
                          " (SELECT dst FROM temp.ds_runmap WHERE src = s.run_id)"
                          " FROM ds_src.suite_entries s", "cannot merge suite entries") < 0
             ? -1 : 0;
}

/* Launches with features on both sides that differ, and measurements on
   both sides that differ: the first few keys, and how many. */
static const char conflict_launch_sql[] =
  "SELECT s.app, s.dataset, s.lseq, s.id, d.id, s.kernel <> d.kernel"
  " OR s.grid_x <> d.grid_x OR s.grid_y <> d.grid_y OR s.grid_z <> d.grid_z"
  " OR s.block_x <> d.block_x OR s.block_y <> d.block_y"
  " OR s.block_z <> d.block_z OR s.shmem <> d.shmem"
  " FROM ds_src.launches s JOIN main.launches d ON d.app = s.app"
  " AND d.dataset = s.dataset AND d.lseq = s.lseq"
  " WHERE " SRC_KCAST("s.id") " AND " DST_KCAST("d.id")
  " AND (s.kernel <> d.kernel OR s.grid_x <> d.grid_x OR s.grid_y <> d.grid_y"
  " OR s.grid_z <> d.grid_z OR s.block_x <> d.block_x OR s.block_y <> d.block_y"
  " OR s.block_z <> d.block_z OR s.shmem <> d.shmem"
  " OR (SELECT count(*) FROM ds_src.features WHERE launch_id = s.id)"
  " <> (SELECT count(*) FROM main.features WHERE launch_id = d.id)"
  " OR EXISTS (SELECT 1 FROM ds_src.features f JOIN ds_src.feature_names n"
  " ON n.id = f.name_id WHERE f.launch_id = s.id AND NOT EXISTS (SELECT 1"
  " FROM main.feature_names m JOIN main.features g ON g.launch_id = d.id"
  " AND g.name_id = m.id WHERE m.name = n.name AND g.value = f.value)))"
  " ORDER BY s.id";
/* The first feature of src launch ?1 that dst launch ?2 lacks or holds
   another value of, or the first dst has and src lacks. */
static const char conflict_feature_sql[] =
  "SELECT n.name, f.value, (SELECT g.value FROM main.feature_names m"
  " JOIN main.features g ON g.name_id = m.id AND g.launch_id = ?2"
  " WHERE m.name = n.name) AS dv FROM ds_src.features f"
  " JOIN ds_src.feature_names n ON n.id = f.name_id WHERE f.launch_id = ?1"
  " AND dv IS NOT f.value"
  " UNION ALL SELECT m.name, NULL, g.value FROM main.features g"
  " JOIN main.feature_names m ON m.id = g.name_id WHERE g.launch_id = ?2"
  " AND NOT EXISTS (SELECT 1 FROM ds_src.features f JOIN ds_src.feature_names n"
  " ON n.id = f.name_id WHERE f.launch_id = ?1 AND n.name = m.name) LIMIT 1";
static const char conflict_meas_sql[] =
  "SELECT l.app, l.dataset, l.lseq, s.gpu, s.metric, s.rep, s.value, d.value"
  " FROM ds_src.measurements s JOIN ds_src.launches l ON l.id = s.launch_id"
  " JOIN main.launches dl ON dl.app = l.app AND dl.dataset = l.dataset"
  " AND dl.lseq = l.lseq JOIN main.measurements d ON d.launch_id = dl.id"
  " AND d.gpu = s.gpu AND d.metric = s.metric AND d.rep = s.rep"
  " WHERE d.value <> s.value ORDER BY s.id";

#define CONFLICTS_NAMED 3

static void append(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...) {
  size_t n = strlen(buf);
  if (n + 1 >= cap) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + n, cap - n, fmt, ap);
  va_end(ap);
}

static const char *col_text(sqlite3_stmt *s, int c) {
  const unsigned char *t = sqlite3_column_text(s, c);
  return t ? (const char *)t : "";
}

/* 1 when the input disagrees with db (message set), 0 when not, -1 on
   error. */
static int merge_conflicts(ds_db *db, const char *src_path) {
  sqlite3_stmt *q = NULL, *fq = NULL;
  char what[768] = "";
  int64_t nl = 0, nm = 0;
  int rc;
  if (sqlite3_prepare_v2(db->h, conflict_launch_sql, -1, &q, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db->h, conflict_feature_sql, -1, &fq, NULL) != SQLITE_OK)
    goto sqlfail;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (nl++ >= CONFLICTS_NAMED) continue;
    append(what, sizeof what, "%s(app '%s', dataset '%s', lseq %lld): ", nl > 1 ? "; " : "",
           col_text(q, 0), col_text(q, 1), (long long)sqlite3_column_int64(q, 2));
    if (sqlite3_column_int(q, 5)) {
      append(what, sizeof what, "kernel, grid, block or shared memory differ");
      continue;
    }
    sqlite3_bind_int64(fq, 1, sqlite3_column_int64(q, 3));
    sqlite3_bind_int64(fq, 2, sqlite3_column_int64(q, 4));
    if (sqlite3_step(fq) == SQLITE_ROW) {
      append(what, sizeof what, "%s is ", col_text(fq, 0));
      if (sqlite3_column_type(fq, 1) == SQLITE_NULL) append(what, sizeof what, "missing");
      else append(what, sizeof what, "%.17g", sqlite3_column_double(fq, 1));
      append(what, sizeof what, " in the input, ");
      if (sqlite3_column_type(fq, 2) == SQLITE_NULL) append(what, sizeof what, "missing");
      else append(what, sizeof what, "%.17g", sqlite3_column_double(fq, 2));
      append(what, sizeof what, " in the output");
    } else {
      append(what, sizeof what, "features differ");
    }
    sqlite3_reset(fq);
  }
  if (rc != SQLITE_DONE) goto sqlfail;
  sqlite3_finalize(q);
  q = NULL;
  if (sqlite3_prepare_v2(db->h, conflict_meas_sql, -1, &q, NULL) != SQLITE_OK) goto sqlfail;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (nl + nm++ >= CONFLICTS_NAMED) continue;
    append(what, sizeof what, "%s(app '%s', dataset '%s', lseq %lld) %s on %s rep %lld: %.17g in"
           " the input, %.17g in the output", nl + nm > 1 ? "; " : "", col_text(q, 0), col_text(q, 1),
           (long long)sqlite3_column_int64(q, 2), col_text(q, 4), col_text(q, 3),
           (long long)sqlite3_column_int64(q, 5), sqlite3_column_double(q, 6),
           sqlite3_column_double(q, 7));
  }
  if (rc != SQLITE_DONE) goto sqlfail;
  sqlite3_finalize(q);
  sqlite3_finalize(fq);
  if (!nl && !nm) return 0;
  char counts[160] = "";
  if (nl) append(counts, sizeof counts, "%lld launch%s", (long long)nl, nl == 1 ? "" : "es");
  if (nm) append(counts, sizeof counts, "%s%lld measurement%s", nl ? " and " : "", (long long)nm,
                 nm == 1 ? "" : "s");
  ds_set_errmsg(db, "%s: %s disagree with %s (same key, other values; nothing of it merged): %s%s",
                src_path, counts, db->path, what,
                nl + nm > CONFLICTS_NAMED ? "; ..." : "");
  return 1;
sqlfail:
  sql_err(db, "cannot compare the merge input");
  sqlite3_finalize(q);
  sqlite3_finalize(fq);
  return -1;
}

int ds_merge(ds_db *db, const char *src_path, unsigned flags) {
  db->err[0] = 0;
  if (!sqlite3_get_autocommit(db->h)) {
    set_err(db, "merge must run outside a transaction");
    return -1;
  }
  char rp1[4096], rp2[4096];
  if (src_path && realpath(src_path, rp1) && realpath(db->path, rp2) &&
      !strcmp(rp1, rp2)) {
    set_err(db, "cannot merge a dataset into itself");
    return -1;
  }
  ds_db *src;
  char err[sizeof db->err];
  if (ds_open(src_path, DS_READONLY, &src, err, sizeof err) < 0) {
    snprintf(db->err, sizeof db->err, "%s", err);  /* names src_path */
    return -1;
  }
  ds_close(src);
  sqlite3_stmt *at;
  if (sqlite3_prepare_v2(db->h, "ATTACH ?1 AS ds_src", -1, &at, NULL) !=
      SQLITE_OK)
    return sql_err(db, "cannot merge");
  sqlite3_bind_text(at, 1, src_path, -1, SQLITE_STATIC);
  int rc = sqlite3_step(at);
  sqlite3_finalize(at);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot attach merge input");
  int ret = -1;
  if (exec(db, "BEGIN IMMEDIATE", "cannot merge") < 0) goto detach;
  if (!(flags & DS_MERGE_REPLACE) && merge_conflicts(db, src_path) != 0) goto rollback;
  /* Launches (with their features and measurements) of src's runs that
     src no longer has. */
  if ((flags & DS_MERGE_WHOLE_RUNS) &&
      exec(db, "DELETE FROM main.launches WHERE id IN (SELECT d.id FROM main.launches d"
               " WHERE EXISTS (SELECT 1 FROM ds_src.launches s WHERE s.app = d.app AND"
               " s.dataset = d.dataset) AND NOT EXISTS (SELECT 1 FROM ds_src.launches s"
               " WHERE s.app = d.app AND s.dataset = d.dataset AND s.lseq = d.lseq))",
           "cannot merge") < 0)
    goto rollback;
  size_t nsql = sizeof merge_sql / sizeof merge_sql[0];
  for (size_t i = 0; i < nsql; i++) {
    if (i == 3 && (merge_runs(db) < 0 || merge_partial(db) < 0)) goto rollback;
    /* before the run map is dropped */
    if (i == nsql - 1 && merge_suite(db) < 0) goto rollback;
    if (exec(db, merge_sql[i], "cannot merge") < 0) goto rollback;
  }
  if (exec(db, "COMMIT", "cannot merge") < 0) goto rollback;
  ret = 0;
  goto detach;
rollback:
  sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
  drop_name_cache(db);
detach:
  sqlite3_exec(db->h, "DETACH ds_src", NULL, NULL, NULL);
  return ret;
}

/* ---------------------------------------------------------- suite entries -- */

int ds_suite_record(ds_db *db, const ds_suite_entry *e) {
  db->err[0] = 0;
  if (!e->kind || (strcmp(e->kind, "run") && strcmp(e->kind, "profile")) || !e->app ||
      !e->dataset || !e->build || !e->command || !(e->seconds >= 0) || e->launches < 0) {
    set_err(db, "bad suite entry");
    return -1;
  }
  if (exec(db, SUITE_ENTRIES_SQL, "cannot record the suite entry") < 0) return -1;
  sqlite3_stmt *s;
  /* The run that wrote the entry's launches (run) or measurements (profile). */
  if (sqlite3_prepare_v2(db->h, "INSERT OR REPLACE INTO suite_entries(kind, app, dataset, gpu,"
                         " build, command, seconds, launches, run_id) VALUES(?1, ?2, ?3, ?4,"
                         " ?5, ?6, ?7, ?8, CASE ?1 WHEN 'run' THEN (SELECT max(run_id) FROM"
                         " launches WHERE app = ?2 AND dataset = ?3) ELSE (SELECT"
                         " max(m.run_id) FROM measurements m JOIN launches l ON l.id ="
                         " m.launch_id WHERE l.app = ?2 AND l.dataset = ?3 AND m.gpu = ?4)"
                         " END)", -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot record the suite entry");
  sqlite3_bind_text(s, 1, e->kind, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, e->app, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, e->dataset, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 4, e->gpu ? e->gpu : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 5, e->build, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 6, e->command, -1, SQLITE_STATIC);
  sqlite3_bind_double(s, 7, e->seconds);
  sqlite3_bind_int64(s, 8, e->launches);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  return rc == SQLITE_DONE ? 0 : sql_err(db, "cannot record the suite entry");
}

int ds_suite_find(ds_db *db, const char *kind, const char *app, const char *dataset,
                  const char *gpu, ds_suite_entry *out) {
  db->err[0] = 0;
  int64_t has;
  if (query_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                    " AND name = 'suite_entries'", &has) < 0)
    return -1;
  if (!has) return 0;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h, "SELECT kind, app, dataset, gpu, build, command, seconds,"
                         " launches FROM suite_entries WHERE kind = ?1 AND app = ?2 AND"
                         " dataset = ?3 AND (?4 IS NULL OR gpu = ?4) ORDER BY seconds DESC"
                         " LIMIT 1", -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read the suite entries");
  sqlite3_bind_text(s, 1, kind ? kind : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, app ? app : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, dataset ? dataset : "", -1, SQLITE_STATIC);
  if (gpu) sqlite3_bind_text(s, 4, gpu, -1, SQLITE_STATIC);
  int rc = sqlite3_step(s), ret = 0;
  if (rc == SQLITE_ROW) {
    /* suite_str[2..4]: gpu, build, command (columns 3..5) */
    for (int i = 2; i < 5; i++) {
      free(db->suite_str[i]);
      db->suite_str[i] = strdup(col_text(s, i + 1));
    }
    ret = 1;
  }
  if (ret) {
    /* kind/app/dataset as asked; gpu, build, command from the row */
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->app = app;
    out->dataset = dataset;
    out->gpu = db->suite_str[2];
    out->build = db->suite_str[3];
    out->command = db->suite_str[4];
    out->seconds = sqlite3_column_double(s, 6);
    out->launches = sqlite3_column_int64(s, 7);
    for (int i = 2; i < 5; i++)
      if (!db->suite_str[i]) ret = -2;
  }
  sqlite3_finalize(s);
  if (ret == -2) {
    set_err(db, "out of memory");
    return -1;
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sql_err(db, "cannot read the suite entries");
  return ret;
}

/* ---------------------------------------------------------------- readers -- */

int ds_iter_launches(ds_db *db, const char *app, const char *dataset,
                     ds_iter **it) {
  db->err[0] = 0;
  *it = NULL;
  ds_iter *i = calloc(1, sizeof *i);
  if (!i) {
    set_err(db, "out of memory");
    return -1;
  }
  i->db = db;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT id, bench, app, dataset, lseq, kernel, grid_x,"
                         " grid_y, grid_z, block_x, block_y, block_z, shmem,"
                         " source FROM launches WHERE (?1 IS NULL OR app = ?1)"
                         " AND (?2 IS NULL OR dataset = ?2) ORDER BY id",
                         -1, &i->st, NULL) != SQLITE_OK) {
    free(i);
    return sql_err(db, "cannot list launches");
  }
  if (app) sqlite3_bind_text(i->st, 1, app, -1, SQLITE_TRANSIENT);
  if (dataset) sqlite3_bind_text(i->st, 2, dataset, -1, SQLITE_TRANSIENT);
  *it = i;
  return 0;
}

int ds_iter_next(ds_iter *it, int64_t *id, ds_launch *out) {
  int rc = sqlite3_step(it->st);
  if (rc == SQLITE_DONE) return 0;
  if (rc != SQLITE_ROW) return sql_err(it->db, "cannot list launches");
  sqlite3_stmt *s = it->st;
  if (id) *id = sqlite3_column_int64(s, 0);
  if (out) {
    memset(out, 0, sizeof *out);
    out->bench = (const char *)sqlite3_column_text(s, 1);
    out->app = (const char *)sqlite3_column_text(s, 2);
    out->dataset = (const char *)sqlite3_column_text(s, 3);
    out->lseq = sqlite3_column_int64(s, 4);
    out->kernel = (const char *)sqlite3_column_text(s, 5);
    for (int d = 0; d < 3; d++) {
      out->grid[d] = (uint32_t)sqlite3_column_int64(s, 6 + d);
      out->block[d] = (uint32_t)sqlite3_column_int64(s, 9 + d);
    }
    out->shmem = sqlite3_column_int64(s, 12);
    out->source = (const char *)sqlite3_column_text(s, 13);
  }
  return 1;
}

void ds_iter_free(ds_iter *it) {
  if (!it) return;
  sqlite3_finalize(it->st);
  free(it);
}

int ds_get_features(ds_db *db, int64_t launch_id, feat_vec *out) {
  db->err[0] = 0;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT n.name, f.value FROM features f JOIN"
                         " feature_names n ON n.id = f.name_id"
                         " WHERE f.launch_id = ?1", -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read features");
  sqlite3_bind_int64(s, 1, launch_id);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (feat_set(out, (const char *)sqlite3_column_text(s, 0),
                 sqlite3_column_double(s, 1)) < 0) {
      sqlite3_finalize(s);
      set_err(db, "out of memory");
      return -1;
    }
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot read features");
  return 0;
}

double ds_feature_default(const char *name) {
  static const char *const counts[] = {"op.", "class.", "mem.", "static.", "tensor.", "opr."};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++)
    if (name && !strncmp(name, counts[i], strlen(counts[i]))) return 0.0;
  return NAN;
}

void ds_query_init(ds_query *q) {
  memset(q, 0, sizeof *q);
  q->agg = DS_AGG_MEDIAN;
  q->missing = DS_MISSING_DEFAULT;
}

void ds_target_free(ds_target *t) {
  if (!t) return;
  free(t->launch_id);
  free(t->value);
  memset(t, 0, sizeof *t);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double ds_aggregate(double *vals, size_t n, int agg) {
  if (agg == DS_AGG_MEAN) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += vals[i];
    return s / (double)n;
  }
  qsort(vals, n, sizeof *vals, cmp_double);
  return n % 2 ? vals[n / 2] : 0.5 * (vals[n / 2 - 1] + vals[n / 2]);
}

int ds_query_target(ds_db *db, const char *gpu, const char *metric, int agg,
                    ds_target *out) {
  db->err[0] = 0;
  memset(out, 0, sizeof *out);
  if (!gpu || !*gpu || !valid_metric(metric) ||
      (agg != DS_AGG_MEDIAN && agg != DS_AGG_MEAN)) {
    set_err(db, "query needs a GPU name, a metric (time_ns, power_w,"
            " energy_j) and an aggregate (median, mean)");
    return -1;
  }
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT launch_id, value FROM measurements"
                         " WHERE gpu = ?1 AND metric = ?2 ORDER BY launch_id",
                         -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read measurements");
  sqlite3_bind_text(s, 1, gpu, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 2, metric, -1, SQLITE_STATIC);
  size_t cap = 0, vcap = 0, nv = 0;
  double *vals = NULL;
  int64_t cur = 0;
  int rc, ret = -1;
  for (;;) {
    rc = sqlite3_step(s);
    int64_t lid = rc == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    if (nv && (rc != SQLITE_ROW || lid != cur)) {  /* close the group */
      if (out->n == cap) {
        size_t nc = cap ? 2 * cap : 256;
        int64_t *ids = realloc(out->launch_id, nc * sizeof *ids);
        if (ids) out->launch_id = ids;
        double *v = ids ? realloc(out->value, nc * sizeof *v) : NULL;
        if (!v) goto nomem;
        out->value = v;
        cap = nc;
      }
      out->launch_id[out->n] = cur;
      out->value[out->n++] = ds_aggregate(vals, nv, agg);
      nv = 0;
    }
    if (rc != SQLITE_ROW) break;
    if (nv == vcap) {
      size_t nc = vcap ? 2 * vcap : 16;
      double *v = realloc(vals, nc * sizeof *v);
      if (!v) goto nomem;
      vals = v;
      vcap = nc;
    }
    cur = lid;
    vals[nv++] = sqlite3_column_double(s, 1);
  }
  if (rc != SQLITE_DONE) {
    sql_err(db, "cannot read measurements");
    goto fail;
  }
  ret = 0;
  goto out;
nomem:
  set_err(db, "out of memory");
fail:
  ds_target_free(out);
out:
  free(vals);
  sqlite3_finalize(s);
  return ret;
}

void ds_matrix_free(ds_matrix *m) {
  if (!m) return;
  for (size_t c = 0; m->colnames && c < m->cols; c++) free(m->colnames[c]);
  for (size_t r = 0; r < m->rows; r++) {
    if (m->app) free(m->app[r]);
    if (m->dataset) free(m->dataset[r]);
    if (m->kernel) free(m->kernel[r]);
  }
  free(m->colnames);
  free(m->x);
  free(m->y);
  free(m->launch_id);
  free(m->app);
  free(m->dataset);
  free(m->kernel);
  free(m->lseq);
  memset(m, 0, sizeof *m);
}

/* Family of a name: the bytes before its first dot. */
int ds_is_tune_feature(const char *name) {
  return name && !strncmp(name, DS_TUNE_PREFIX, sizeof DS_TUNE_PREFIX - 1);
}

static int in_families(const ds_query *q, const char *name) {
  if (!q->families)
    return strncmp(name, "emu.", 4) != 0 && strncmp(name, "arg.", 4) != 0 &&
           (q->with_tune || !ds_is_tune_feature(name));
  size_t len = strcspn(name, ".");
  for (size_t i = 0; i < q->nfamilies; i++)
    if (q->families[i] && strlen(q->families[i]) == len &&
        !strncmp(name, q->families[i], len))
      return 1;
  return 0;
}

/* Rows of a matrix query: launches (by id) that pass q's filters. */
static int matrix_rows(ds_db *db, const ds_query *q, const ds_target *t,
                       ds_matrix *m) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT id, app, dataset, kernel, EXISTS(SELECT 1"
                         " FROM features f JOIN feature_names n ON n.id = f.name_id"
                         " WHERE f.launch_id = l.id AND substr(n.name, 1, 5) <> 'tune.'),"
                         " lseq"
                         " FROM launches l WHERE (?1 IS NULL OR app = ?1)"
                         " AND (?2 IS NULL OR dataset = ?2) ORDER BY id",
                         -1, &s, NULL) != SQLITE_OK)
    return sql_err(db, "cannot read launches");
  if (q->app) sqlite3_bind_text(s, 1, q->app, -1, SQLITE_STATIC);
  if (q->dataset) sqlite3_bind_text(s, 2, q->dataset, -1, SQLITE_STATIC);
  size_t cap = 0, ti = 0;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(s, 0);
    double y = 0;
    if (t) {
      while (ti < t->n && t->launch_id[ti] < id) ti++;
      if (ti == t->n || t->launch_id[ti] != id) continue;
      y = t->value[ti];
    }
    if (!q->include_empty && !sqlite3_column_int(s, 4)) continue;
    if (m->rows == cap) {
      size_t nc = cap ? 2 * cap : 256;
      int64_t *ids = realloc(m->launch_id, nc * sizeof *ids);
      if (ids) m->launch_id = ids;
      char **a = ids ? realloc(m->app, nc * sizeof *a) : NULL;
      if (a) m->app = a;
      char **d = a ? realloc(m->dataset, nc * sizeof *d) : NULL;
      if (d) m->dataset = d;
      char **k = d ? realloc(m->kernel, nc * sizeof *k) : NULL;
      if (k) m->kernel = k;
      int64_t *ls = k ? realloc(m->lseq, nc * sizeof *ls) : NULL;
      if (ls) m->lseq = ls;
      double *yy = ls && t ? realloc(m->y, nc * sizeof *yy) : NULL;
      if (yy) m->y = yy;
      if (!ls || (t && !yy)) goto nomem;
      cap = nc;
    }
    size_t r = m->rows;
    m->launch_id[r] = id;
    m->app[r] = strdup((const char *)sqlite3_column_text(s, 1));
    m->dataset[r] = strdup((const char *)sqlite3_column_text(s, 2));
    m->kernel[r] = strdup((const char *)sqlite3_column_text(s, 3));
    m->lseq[r] = sqlite3_column_int64(s, 5);
    if (t) m->y[r] = y;
    m->rows++;
    if (!m->app[r] || !m->dataset[r] || !m->kernel[r]) goto nomem;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return sql_err(db, "cannot read launches");
  return 0;
nomem:
  sqlite3_finalize(s);
  set_err(db, "out of memory");
  return -1;
}

/* Scan every feature row of the matrix's launches, calling fn(row, name_id,
   value) for names that have colof[name_id] >= 0. */
typedef struct scan_ctx {
  ds_matrix *m;
  const int64_t *colof;  /* name_id -> candidate column or -1 */
  int64_t maxid;
  unsigned char *seen;   /* pass 1: candidate column present in a row */
  double *x;             /* pass 2: rows * ncand values */
  size_t ncand;
} scan_ctx;

static int scan_features(ds_db *db, scan_ctx *c) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT launch_id, name_id, value FROM features"
                         " ORDER BY launch_id, name_id", -1, &s, NULL) !=
      SQLITE_OK)
    return sql_err(db, "cannot read features");
  size_t r = 0;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    int64_t lid = sqlite3_column_int64(s, 0);
    while (r < c->m->rows && c->m->launch_id[r] < lid) r++;
    if (r == c->m->rows) break;
    if (c->m->launch_id[r] != lid) continue;
    int64_t nid = sqlite3_column_int64(s, 1);
    if (nid < 0 || nid > c->maxid || c->colof[nid] < 0) continue;
    size_t col = (size_t)c->colof[nid];
    if (c->x) c->x[r * c->ncand + col] = sqlite3_column_double(s, 2);
    else c->seen[col] = 1;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW)
    return sql_err(db, "cannot read features");
  return 0;
}

static int same(double a, double b) {
  return (isnan(a) && isnan(b)) || a == b;
}

int ds_query_matrix(ds_db *db, const ds_query *q, ds_matrix *out) {
  db->err[0] = 0;
  memset(out, 0, sizeof *out);
  ds_target t = {0};
  sqlite3_stmt *s = NULL;
  char **cand = NULL;
  int64_t *colof = NULL;
  unsigned char *seen = NULL;
  size_t ncand = 0;
  int64_t maxid = 0;
  int ret = -1;
  if (!q || (q->families && !q->nfamilies) ||
      (q->missing != DS_MISSING_DEFAULT && q->missing != DS_MISSING_NAN)) {
    set_err(db, "invalid matrix query (see ds_query_init)");
    return -1;
  }
  if (q->gpu && ds_query_target(db, q->gpu, q->metric, q->agg, &t) < 0)
    return -1;
  if (matrix_rows(db, q, q->gpu ? &t : NULL, out) < 0) goto fail;
  /* Candidate columns: feature names of the chosen families, by name. */
  if (query_int(db, "SELECT coalesce(max(id), 0) FROM feature_names",
                &maxid) < 0)
    goto fail;
  if (maxid < 0 || (uint64_t)maxid >= SIZE_MAX / sizeof *colof / 2) {
    set_err(db, "feature_names ids out of range");
    goto fail;
  }
  colof = malloc(((size_t)maxid + 1) * sizeof *colof);
  cand = calloc((size_t)maxid + 1, sizeof *cand);
  if (!colof || !cand) goto nomem;
  for (int64_t i = 0; i <= maxid; i++) colof[i] = -1;
  if (sqlite3_prepare_v2(db->h, "SELECT id, name FROM feature_names"
                         " ORDER BY name", -1, &s, NULL) != SQLITE_OK) {
    sql_err(db, "cannot read feature names");
    goto fail;
  }
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(s, 0);
    const char *name = (const char *)sqlite3_column_text(s, 1);
    if (id < 0 || id > maxid || !name || !in_families(q, name)) continue;
    if (!(cand[ncand] = strdup(name))) goto nomem;
    colof[id] = (int64_t)ncand++;
  }
  sqlite3_finalize(s);
  s = NULL;
  if (rc != SQLITE_DONE) {
    sql_err(db, "cannot read feature names");
    goto fail;
  }
  /* Pass 1: which candidates occur in the rows. */
  seen = calloc(ncand ? ncand : 1, 1);
  if (!seen) goto nomem;
  scan_ctx c = {out, colof, maxid, seen, NULL, 0};
  if (out->rows && scan_features(db, &c) < 0) goto fail;
  size_t ncols = 0;
  for (size_t j = 0; j < ncand; j++) {
    if (seen[j]) {  /* keep, moved down to column ncols */
      cand[ncols] = cand[j];
      if (ncols != j) cand[j] = NULL;
      ncols++;
    } else {
      free(cand[j]);
      cand[j] = NULL;
    }
  }
  {
    /* old candidate index -> new column index, or -1 */
    int64_t *remap = malloc((ncand ? ncand : 1) * sizeof *remap);
    if (!remap) goto nomem;
    for (size_t j = 0, k = 0; j < ncand; j++)
      remap[j] = seen[j] ? (int64_t)k++ : -1;
    for (int64_t i = 0; i <= maxid; i++)
      if (colof[i] >= 0) colof[i] = remap[colof[i]];
    free(remap);
  }
  /* Pass 2: values, missing ones per q->missing. */
  if (ncols && out->rows > SIZE_MAX / sizeof(double) / ncols) goto nomem;
  size_t ncells = out->rows * ncols;
  double *x = malloc((ncells ? ncells : 1) * sizeof *x);
  if (!x) goto nomem;
  out->x = x;
  for (size_t j = 0; j < ncols; j++) {
    double d = q->missing == DS_MISSING_NAN ? NAN : ds_feature_default(cand[j]);
    for (size_t r = 0; r < out->rows; r++) x[r * ncols + j] = d;
  }
  c.x = x;
  c.ncand = ncols;
  if (out->rows && ncols && scan_features(db, &c) < 0) goto fail;
  /* Drop constant columns, compacting rows in place. */
  size_t keep = 0;
  for (size_t j = 0; j < ncols; j++) {
    int constant = q->drop_constant;
    for (size_t r = 1; constant && r < out->rows; r++)
      if (!same(x[r * ncols + j], x[j])) constant = 0;
    if (constant) {
      free(cand[j]);
      cand[j] = NULL;
      continue;
    }
    if (keep != j) {
      for (size_t r = 0; r < out->rows; r++) x[r * ncols + keep] = x[r * ncols + j];
      cand[keep] = cand[j];
      cand[j] = NULL;
    }
    keep++;
  }
  if (keep < ncols) {
    for (size_t r = 0; r < out->rows; r++)
      memmove(x + r * keep, x + r * ncols, keep * sizeof *x);
  }
  out->cols = keep;
  out->colnames = cand;
  cand = NULL;
  ret = 0;
  goto out;
nomem:
  set_err(db, "out of memory");
fail:
  for (size_t j = 0; cand && j < ncand; j++) free(cand[j]);
  ds_matrix_free(out);
out:
  if (s) sqlite3_finalize(s);
  free(cand);
  free(colof);
  free(seen);
  ds_target_free(&t);
  return ret;
}

/* ------------------------------------------------------------------ stats -- */

void ds_stats_free(ds_stats *s) {
  if (!s) return;
  for (size_t i = 0; i < s->napps; i++) free(s->apps[i].app);
  for (size_t i = 0; i < s->nmeas; i++) {
    free(s->meas[i].gpu);
    free(s->meas[i].metric);
  }
  free(s->apps);
  free(s->meas);
  memset(s, 0, sizeof *s);
}

int ds_get_stats(ds_db *db, ds_stats *out) {
  db->err[0] = 0;
  memset(out, 0, sizeof *out);
  struct { const char *sql; int64_t *dst; } totals[] = {
    {"SELECT count(*) FROM launches", &out->launches},
    {"SELECT count(*) FROM features", &out->feature_rows},
    {"SELECT count(*) FROM feature_names", &out->feature_names},
    {"SELECT count(*) FROM measurements", &out->measurements},
    {"SELECT count(*) FROM gpus", &out->gpus},
    {"SELECT count(*) FROM runs", &out->runs},
  };
  for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++)
    if (query_int(db, totals[i].sql, totals[i].dst) < 0) return -1;
  int64_t has_partial;
  if (query_int(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
                    " AND name = 'partial_runs'", &has_partial) < 0 ||
      (has_partial && query_int(db, "SELECT count(*) FROM partial_runs", &out->partial_runs) < 0))
    return -1;
  sqlite3_stmt *s = NULL;
  int rc;
  if (sqlite3_prepare_v2(db->h,
                         "SELECT l.app, count(*), count(DISTINCT l.dataset),"
                         " count(DISTINCT l.kernel), sum((SELECT count(*) FROM"
                         " features f WHERE f.launch_id = l.id))"
                         " FROM launches l GROUP BY l.app ORDER BY l.app",
                         -1, &s, NULL) != SQLITE_OK)
    goto sqlfail;
  size_t cap = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (out->napps == cap) {
      cap = cap ? 2 * cap : 16;
      ds_app_stats *a = realloc(out->apps, cap * sizeof *a);
      if (!a) goto nomem;
      out->apps = a;
    }
    ds_app_stats *a = &out->apps[out->napps];
    a->app = strdup((const char *)sqlite3_column_text(s, 0));
    if (!a->app) goto nomem;
    a->launches = sqlite3_column_int64(s, 1);
    a->datasets = sqlite3_column_int64(s, 2);
    a->kernels = sqlite3_column_int64(s, 3);
    a->feature_rows = sqlite3_column_int64(s, 4);
    out->napps++;
  }
  if (rc != SQLITE_DONE) goto sqlfail;
  sqlite3_finalize(s);
  if (sqlite3_prepare_v2(db->h,
                         "SELECT gpu, metric, count(DISTINCT launch_id),"
                         " count(*) FROM measurements GROUP BY gpu, metric"
                         " ORDER BY gpu, metric", -1, &s, NULL) != SQLITE_OK)
    goto sqlfail;
  cap = 0;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (out->nmeas == cap) {
      cap = cap ? 2 * cap : 8;
      ds_meas_stats *m = realloc(out->meas, cap * sizeof *m);
      if (!m) goto nomem;
      out->meas = m;
    }
    ds_meas_stats *m = &out->meas[out->nmeas];
    m->gpu = strdup((const char *)sqlite3_column_text(s, 0));
    m->metric = m->gpu ? strdup((const char *)sqlite3_column_text(s, 1)) : NULL;
    if (!m->metric) {
      free(m->gpu);
      goto nomem;
    }
    m->launches = sqlite3_column_int64(s, 2);
    m->values = sqlite3_column_int64(s, 3);
    out->nmeas++;
  }
  if (rc != SQLITE_DONE) goto sqlfail;
  sqlite3_finalize(s);
  return 0;
sqlfail:
  sql_err(db, "cannot compute statistics");
  goto fail;
nomem:
  set_err(db, "out of memory");
fail:
  sqlite3_finalize(s);
  ds_stats_free(out);
  return -1;
}
