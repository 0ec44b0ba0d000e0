/*
 * ptx_fuzz.c -- libFuzzer target for the PTX parser (make fuzz).
 *
 * Feeds arbitrary bytes to ptx_parse and, when a module comes back, prints
 * every instruction and walks every operand through ptx_insn_opnd, so that
 * out-of-range indices left in a module show up under ASan as well as
 * crashes in the parser itself.  A rejected input must carry an error in
 * the FILE:LINE:COL form.  The CFG is another module's and is not built
 * here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "extractor/ptx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ptx_error err;
  ptx_module *m = ptx_parse((const char *)data, size, "fuzz.ptx", &err);
  if (!m) {
    if (strncmp(err.msg, "fuzz.ptx:", 9) != 0 || !strstr(err.msg, ": error: ")) abort();
    return 0;
  }
  char buf[256];
  for (uint32_t fi = 0; fi < m->nfuncs; fi++) {
    const ptx_func *f = &m->funcs[fi];
    for (uint32_t i = 0; i < f->ninsns; i++) {
      const ptx_insn *in = &f->insns[i];
      size_t n = ptx_insn_print(m, f, in, buf, sizeof buf);
      if (n < sizeof buf && strlen(buf) != n) abort();
      if (in->key >= m->nkeys || in->op >= PTX_OP_COUNT) abort();
      for (unsigned j = 0; j < in->nopnd; j++) {
        const ptx_operand *o = ptx_insn_opnd(f, in, j);
        if (!o) abort();
        if (o->kind == PTX_OPND_REG && o->u.reg >= f->nregs) abort();
        if (o->kind == PTX_OPND_LABEL && f->labels[o->u.label].insn > f->ninsns) abort();
      }
    }
  }
  ptx_module_free(m);
  return 0;
}
