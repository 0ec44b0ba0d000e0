/* scale_add.h -- the number of factors of scale_add.cu (a header, so that
   the import's handling of quoted includes is exercised). */
#ifndef SCALE_ADD_H
#define SCALE_ADD_H
#define SCALE_N 4
#endif
