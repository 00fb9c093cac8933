/*
 * Files assembled into the binary: CORRAL_EMBED(sym, "path") places the
 * file's bytes, then a NUL, in read-only data between sym_start and sym_end
 * (.incbin). Paths are relative to the repository root, where make runs the
 * compiler; the Makefile makes the embedding object depend on the files.
 * Used for the RBAC manifests `corral up` applies and the web dashboard.
 */
#ifndef CORRAL_EMBED_H
#define CORRAL_EMBED_H

#define CORRAL_EMBED(sym, file)                                                                    \
    __asm__(".pushsection .rodata\n"                                                               \
            ".balign 16\n" #sym "_start:\n"                                                        \
            ".incbin \"" file "\"\n" #sym "_end:\n"                                                \
            ".byte 0\n"                                                                            \
            ".popsection\n");                                                                      \
    extern const char sym##_start[], sym##_end[]

#endif
