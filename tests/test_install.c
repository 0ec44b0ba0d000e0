/*
 * test_install.c -- `make install PREFIX=DIR` into a fresh folder, then
 * what a user does with it: a C program built with `pkg-config --cflags
 * --libs kcast` (and once statically, with Libs.private) runs and
 * predicts; the installed kcast runs and finds its cudart replacement; the
 * manual pages are there and well formed; the library is installed under
 * its SONAME (libkcast.so.<major>, a link to libkcast.so.<version>), the
 * program asks for that name and the symbol version it was linked with, and
 * `kcast --version`, `pkg-config --modversion kcast`, kcast_version() and
 * the header's KCAST_VERSION_STRING say the same version.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "include/kcast.h"
#include "tests.h"

/* A sanitized build installs a sanitized library: a program linking it
   needs the same runtime (make asan). */
#if defined(__SANITIZE_ADDRESS__)
#define APP_SAN " -fsanitize=address,undefined"
#else
#define APP_SAN ""
#endif

#define CHECK_MSG(msg, cond) \
  CU_assertImplementation(!!(cond), __LINE__, (msg), __FILE__, "", CU_FALSE)

static const char app_c[] =
    "#include <kcast.h>\n"
    "#include <stdio.h>\n"
    "int main(void) {\n"
    "  if (kcast_check_version(KCAST_VERSION_MAJOR, sizeof(kcast_launch_config))) return 3;\n"
    "  kcast_features *fs = NULL;\n"
    "  kcast_prediction t;\n"
    "  if (kcast_features_new(&fs) || kcast_features_set(fs, \"launch.ctas\", 4096) ||\n"
    "      kcast_features_set(fs, \"launch.block_x\", 256) ||\n"
    "      kcast_features_set(fs, \"launch.threads\", 1048576) ||\n"
    "      kcast_predict_analytic(\"H200\", fs, &t, NULL)) {\n"
    "    fprintf(stderr, \"%s\\n\", kcast_last_error());\n"
    "    return 1;\n"
    "  }\n"
    "  printf(\"kcast %s: %.0f ns\\n\", kcast_version(), t.value);\n"
    "  kcast_features_free(fs);\n"
    "  return t.value > 0 ? 0 : 2;\n"
    "}\n";

static int exists(const char *dir, const char *rel) {
  char p[2048];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return access(p, F_OK) == 0;
}

static void test_install_and_build(void) {
  char dir[1024], prefix[1100], cmd[8192];
  CU_ASSERT_PTR_NOT_NULL_FATAL(tests_tmpdir(dir, sizeof dir, "install"));
  snprintf(prefix, sizeof prefix, "%s/prefix", dir);
  char *out = NULL, *err = NULL;
  snprintf(cmd, sizeof cmd, "make -s --no-print-directory install BUILD='%s' PREFIX='%s'",
           tests_build(), prefix);
  int rc = tests_run(cmd, &out, &err);
  CHECK_MSG("make install PREFIX=DIR exits 0", rc == 0);
  if (rc) printf("\n    %s", err ? err : "");
  free(out); free(err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  static const char *const files[] = {
      "bin/kcast", "lib/libkcast.so", "lib/libkcast.a", "include/kcast.h",
      "lib/pkgconfig/kcast.pc", "share/man/man1/kcast.1", "share/man/man1/kcast-train.1",
      "share/man/man1/kcast-predict.1"};
  for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
    char msg[128];
    snprintf(msg, sizeof msg, "make install puts %s in PREFIX", files[k]);
    CHECK_MSG(msg, exists(prefix, files[k]));
  }
  if (exists(tests_build(), "cudart/libcudart.so.13"))
    CHECK_MSG("the cudart replacement is installed in PREFIX/lib/kcast/cudart",
              exists(prefix, "lib/kcast/cudart/libcudart.so.13"));
  if (exists(tests_build(), "libkcast_inject.so"))
    CHECK_MSG("the injection library is installed in PREFIX/lib/kcast",
              exists(prefix, "lib/kcast/libkcast_inject.so"));

  char app[1200];
  snprintf(app, sizeof app, "%s/app.c", dir);
  CU_ASSERT_FATAL(tests_write_file(app, app_c, strlen(app_c)) == 0);
  /* what docs/api.md shows */
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/lib/pkgconfig'; cd '%s' && "
           "cc -std=c99 -Wall -Werror" APP_SAN " app.c -o app $(pkg-config --cflags --libs kcast) && "
           "LD_LIBRARY_PATH='%s/lib' ./app", prefix, dir, prefix);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("a program built with pkg-config --cflags --libs kcast runs and predicts",
            rc == 0 && out && strstr(out, "kcast 0.") && strstr(out, " ns\n"));
  if (rc) printf("\n    %s", err ? err : "");
  free(out); free(err);
  /* without the installed library on the path the shared build cannot
     start: the check above ran against PREFIX's libkcast.so */
  snprintf(cmd, sizeof cmd, "cd '%s' && env -u LD_LIBRARY_PATH ./app", dir);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("the shared build needs PREFIX/lib (it links libkcast.so, not a copy)", rc != 0);
  free(out); free(err);
  snprintf(cmd, sizeof cmd,
           "export PKG_CONFIG_PATH='%s/lib/pkgconfig'; cd '%s' && "
           "cc -std=c99 -Wall -Werror" APP_SAN " app.c -o app-static $(pkg-config --cflags kcast) "
           "$(pkg-config --static --libs kcast | sed 's/-lkcast /-l:libkcast.a /') && "
           "env -u LD_LIBRARY_PATH ./app-static", prefix, dir);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("a static link with Libs.private (pkg-config --static) runs without libkcast.so",
            rc == 0 && out && strstr(out, " ns\n"));
  if (rc) printf("\n    %s", err ? err : "");
  free(out); free(err);

  snprintf(cmd, sizeof cmd, "'%s/bin/kcast' version", prefix);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("the installed kcast runs", rc == 0 && out && !strncmp(out, "kcast 0.", 8));
  free(out); free(err);

  /* one version everywhere */
  char want[128];
  snprintf(want, sizeof want, "kcast %s\n", KCAST_VERSION_STRING);
  snprintf(cmd, sizeof cmd, "'%s/bin/kcast' --version", prefix);
  rc = tests_run(cmd, &out, &err);
  CHECK_MSG("kcast --version prints the header's KCAST_VERSION_STRING",
            rc == 0 && out && !strcmp(out, want));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "PKG_CONFIG_PATH='%s/lib/pkgconfig' pkg-config --modversion kcast",
           prefix);
  rc = tests_run(cmd, &out, &err);
  snprintf(want, sizeof want, "%s\n", KCAST_VERSION_STRING);
  CHECK_MSG("pkg-config --modversion kcast says the same version", rc == 0 && out && !strcmp(out, want));
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "cd '%s' && LD_LIBRARY_PATH='%s/lib' ./app", dir, prefix);
  rc = tests_run(cmd, &out, &err);
  snprintf(want, sizeof want, "kcast %s: ", KCAST_VERSION_STRING);
  CHECK_MSG("kcast_version() of the installed library says the same version",
            rc == 0 && out && !strncmp(out, want, strlen(want)));
  free(out); free(err);
  /* the shared library under its SONAME */
  snprintf(cmd, sizeof cmd,
           "cd '%s/lib' && readlink libkcast.so && readlink libkcast.so.%d && "
           "readelf -d libkcast.so.%s | sed -n 's/.*(SONAME).*\\[\\(.*\\)\\]/soname \\1/p'",
           prefix, KCAST_VERSION_MAJOR, KCAST_VERSION_STRING);
  rc = tests_run(cmd, &out, &err);
  char layout[256];
  snprintf(layout, sizeof layout, "libkcast.so.%d\nlibkcast.so.%s\nsoname libkcast.so.%d\n",
           KCAST_VERSION_MAJOR, KCAST_VERSION_STRING, KCAST_VERSION_MAJOR);
  CHECK_MSG("lib/libkcast.so -> libkcast.so.<major> -> libkcast.so.<version>, SONAME libkcast.so.<major>",
            rc == 0 && out && !strcmp(out, layout));
  if (!(rc == 0 && out && !strcmp(out, layout))) printf("\n    %s%s", out ? out : "", err ? err : "");
  free(out); free(err);
  snprintf(cmd, sizeof cmd, "readelf -d -V '%s/app'", dir);
  rc = tests_run(cmd, &out, &err);
  snprintf(want, sizeof want, "Shared library: [libkcast.so.%d]", KCAST_VERSION_MAJOR);
  CHECK_MSG("the program needs libkcast.so.<major> and a KCAST_ symbol version",
            rc == 0 && out && strstr(out, want) && strstr(out, "Name: KCAST_"));
  free(out); free(err);
  char prog[1200];
  snprintf(prog, sizeof prog, "%s/suite/scan", tests_build());
  if (access(prog, X_OK) == 0 && exists(prefix, "lib/kcast/cudart/libcudart.so.13")) {
    snprintf(cmd, sizeof cmd, "env -u KCAST_CUDART '%s/bin/kcast' run -o '%s/r.db' -- '%s' 4096 128",
             prefix, dir, prog);
    rc = tests_run(cmd, &out, &err);
    CHECK_MSG("the installed kcast run finds PREFIX/lib/kcast/cudart",
              rc == 0 && err && strstr(err, "3 launches of scan recorded"));
    free(out); free(err);
  }
  snprintf(cmd, sizeof cmd, "groff -man -ww -z '%s/share/man/man1/kcast-run.1' 2>&1 && "
           "grep -c 'kcast run' '%s/share/man/man1/kcast-run.1'", prefix, prefix);
  if (access("/usr/bin/groff", X_OK) == 0) {
    rc = tests_run(cmd, &out, &err);
    CHECK_MSG("kcast-run.1 is well-formed roff holding run's usage",
              rc == 0 && out && atoi(out) > 0 && !strstr(out, "warning"));
    free(out); free(err);
  }
}

TEST_SUITES(install_suites) {
  CU_pSuite s = tests_suite("install");
  TEST_ADD(s, test_install_and_build);
}
