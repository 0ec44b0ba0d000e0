/*
 * kcast.h -- the public C API of kcast (libkcast).
 *
 * This is the only header a scheduler includes.  It builds as C and C++.
 * The prediction API (models, feature sets, predictions with intervals) is
 * added here as it lands; for now it carries the version.
 */
#ifndef KCAST_H
#define KCAST_H

#ifdef __cplusplus
extern "C" {
#endif

#define KCAST_VERSION_MAJOR 0
#define KCAST_VERSION_MINOR 1
#define KCAST_VERSION_PATCH 0
#define KCAST_VERSION_STRING "0.1.0"

#ifdef __cplusplus
}
#endif

#endif
