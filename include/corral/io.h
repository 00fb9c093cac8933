/*
 * Reading files for the CLI and the simulator: whole files with a size limit
 * (checked before reading, so a 100 MB file is refused at once), standard
 * input as "-", and recursive directory listings in a stable order.
 */
#ifndef CORRAL_IO_H
#define CORRAL_IO_H

#include <stddef.h>

#include "corral/common.h"
#include "corral/diag.h"

/*
 * Read path ("-" for standard input) into a NUL-terminated buffer the caller
 * frees with corral_free. Files over max bytes are refused with CORRAL_ETOOBIG.
 * Failures are also reported to diag (file name and reason). Returns 0 or a
 * negative CORRAL_E* code.
 */
int corral_file_read(const char *path, size_t max, corral_diag_t *diag, char **data, size_t *len);

/*
 * Expand path into files: a regular file (or "-") is itself; a directory is
 * searched recursively for names ending in one of exts (e.g. ".yaml"), hidden
 * entries skipped, sorted by path. Appends to *files (each corral_strdup'ed;
 * caller frees each and the array). Returns 0, or CORRAL_ENOENT/EIO with the
 * reason in diag.
 */
int corral_path_expand(const char *path, const char *const *exts, size_t nexts, corral_diag_t *diag,
                       char ***files, size_t *nfiles);

#endif
